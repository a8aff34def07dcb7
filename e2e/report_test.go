package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/presets"
)

// chromium finds Debian's Chromium; CI installs it (scripts/test.sh).
func chromium(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (scripts/install-deps.sh browser installs it)")
		}
		t.Skip("chromium is not installed")
	}
	return p
}

// TestReportOfQuickRunInChromium runs the quick preset (a fifth of its
// sizes: the page draws every size range, mode and instance all the
// same), writes its report, figures and tables, and opens the page in
// headless Chromium: it must render without console errors and hold the
// figures and tables.
func TestReportOfQuickRunInChromium(t *testing.T) {
	testutil.RequireRoot(t)
	browser := chromium(t)
	bin := testutil.Binary(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "quick")
	quick, err := presets.Read("quick")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(quick), "coverage: 0.01 ", "coverage: 0.002 ", 1)
	if doc == string(quick) {
		t.Fatal("the quick preset no longer says coverage: 0.01")
	}
	if out, err := exec.Command(bin, "run", writeSpec(t, doc), "-o", dir).CombinedOutput(); err != nil {
		t.Fatalf("run quick: %v\n%s", err, out)
	}
	assertNothingLeft(t, bin)
	html := filepath.Join(tmp, "report.html")
	figs, tabs := filepath.Join(tmp, "figs"), filepath.Join(tmp, "tabs")
	out, err := exec.Command(bin, "report", dir, "-o", html, "--figures", figs, "--tables", tabs).CombinedOutput()
	if err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	for _, want := range []string{"report: " + html, "transfer MB/s", "overlay"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("report output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"fig-transfer.svg", "fig-transfer.png", "fig-loss-transfer.png", "fig-impacts.svg"} {
		if st, err := os.Stat(filepath.Join(figs, f)); err != nil || st.Size() == 0 {
			t.Errorf("figure file %s: %v", f, err)
		}
	}
	var data struct {
		Reference string                       `json:"reference"`
		Summary   map[string][]json.RawMessage `json:"summary"`
		SmallBig  map[string][]json.RawMessage `json:"small_big"`
	}
	b, err := os.ReadFile(filepath.Join(tabs, "tables.json"))
	if err != nil || json.Unmarshal(b, &data) != nil {
		t.Fatalf("tables.json: %v", err)
	}
	if data.Reference != "bare" || len(data.Summary["transfer"]) != 5 || len(data.SmallBig["transfer"]) != 5 {
		t.Errorf("tables.json: reference %q, %d summary rows, %d small/big rows", data.Reference, len(data.Summary["transfer"]), len(data.SmallBig["transfer"]))
	}
	if _, err := os.Stat(filepath.Join(tabs, "tab-summary-transfer.csv")); err != nil {
		t.Error(err)
	}

	found, problems, shot := browse(t, browser, html, filepath.Join(tmp, "chromium"), `(() => {
		const n = s => document.querySelectorAll(s).length;
		const w = s => { const e = document.querySelector(s); return e ? Math.round(e.getBoundingClientRect().width) : 0; };
		return {
			transfer: n("#fig-transfer svg"), latency: n("#fig-latency svg"), rps: n("#fig-rps svg"),
			loss: n("#fig-loss-transfer svg"), impacts: n("#fig-impacts svg"), perMode: n("figure[id^='fig-transfer-'] svg, figure[id^='fig-latency-'] svg, figure[id^='fig-rps-'] svg"),
			summaryRows: n("#tab-summary-transfer tbody tr"), smallBig: n("#tab-smallbig tbody tr"), deviation: n("#tab-deviation tbody tr"),
			coloured: n("td.better, td.worse, td.same"), svgWidth: w("#fig-transfer svg"),
		};
	})()`, "#fig-transfer")
	want := map[string]int{"transfer": 1, "latency": 1, "rps": 1, "loss": 1, "impacts": 1, "perMode": 15, "summaryRows": 5, "deviation": 5}
	for k, v := range want {
		if found[k] != v {
			t.Errorf("%s: found %d, want %d (all: %v)", k, found[k], v, found)
		}
	}
	if found["smallBig"] != 15 || found["coloured"] == 0 || found["svgWidth"] < 400 {
		t.Errorf("page: %v", found)
	}
	if len(problems) > 0 {
		t.Errorf("browser errors: %v", problems)
	}
	if len(shot) < 10000 {
		t.Errorf("screenshot of the transfer plot is %d bytes: nothing drawn?", len(shot))
	}
	if p := os.Getenv("CNPERF_SCREENSHOT"); p != "" {
		_ = os.WriteFile(p, shot, 0o644)
	}
}

// browse opens a page in headless Chromium, evaluates js (which returns an
// object of counts) and screenshots the element shot, collecting every
// console error, exception and error log entry on the way.
func browse(t *testing.T, browser, page, profile, js, shotSel string) (map[string]int, []string, []byte) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true), chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(profile), chromedp.WindowSize(1200, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	var mu sync.Mutex
	var problems []string
	// The page's events arrive on their own, after the calls that caused
	// them may have returned; a marker logged last arrives after them all
	// (the browser sends a target's events in order).
	const marker = "cnperf-end-of-events"
	arrived := make(chan struct{})
	var once sync.Once
	listen := func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeDebug && len(e.Args) == 1 && string(e.Args[0].Value) == `"`+marker+`"` {
				once.Do(func() { close(arrived) })
				return
			}
			if e.Type == runtime.ConsoleAPICalledTypeError {
				problems = append(problems, fmt.Sprintf("console.error: %d args", len(e.Args)))
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				problems = append(problems, "log: "+e.Entry.Text)
			}
		}
	}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(listen))
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	// Start on a blank page and turn the log and runtime domains on first.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("enable log: %v", err)
	}
	if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("enable runtime: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS(shotSel))); err != nil {
		t.Fatalf("load %s: %v", page, err)
	}
	found, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]int](js))
	if err != nil {
		t.Fatalf("inspect the page: %v", err)
	}
	shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(shotSel)))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`console.debug("`+marker+`")`)); err != nil {
		t.Fatalf("log the end marker: %v", err)
	}
	select {
	case <-arrived:
	case <-ctx.Done():
		t.Fatalf("the page's events did not arrive: %v", ctx.Err())
	}
	mu.Lock()
	defer mu.Unlock()
	return found, append([]string(nil), problems...), shot
}

// TestBrowseSeesErrors is the control for the report test: a page that logs
// an error and throws must be caught, or "no console errors" means nothing.
func TestBrowseSeesErrors(t *testing.T) {
	browser := chromium(t)
	tmp := t.TempDir()
	page := filepath.Join(tmp, "bad.html")
	html := `<!DOCTYPE html><html><body><div id="x">x</div><script>console.error("boom"); undefinedFunction();</script></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	_, problems, _ := browse(t, browser, page, filepath.Join(tmp, "chromium"), `({x: document.querySelectorAll("#x").length})`, "#x")
	all := strings.Join(problems, "\n")
	if !strings.Contains(all, "console.error") || !strings.Contains(all, "exception") {
		t.Errorf("the listener missed the page's errors: %q", problems)
	}
}
