package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/export"
)

// runDirs are the directories of the runs read.
func runDirs(runs []Run) []string {
	var d []string
	for _, run := range runs {
		d = append(d, run.Dir)
	}
	return d
}

// figurePaths and tablePaths are the files WriteFigures and WriteTables
// write into dir.
func (r *Report) figurePaths(dir string) []string {
	var p []string
	for _, fg := range r.Figures {
		p = append(p, filepath.Join(dir, fg.ID+".svg"), filepath.Join(dir, fg.ID+".png"))
	}
	return p
}

func (r *Report) tablePaths(dir string) []string {
	var p []string
	for _, t := range r.Tables {
		p = append(p, filepath.Join(dir, t.ID+".csv"))
	}
	return append(p, filepath.Join(dir, "tables.json"))
}

// CheckOutputs refuses, before anything is written, an HTML path or a
// figure or table directory ("" for none) that would write over a file a
// run holds (record.CheckOutput): the error wraps record.ErrRunFile.
func (r *Report) CheckOutputs(html, figures, tables string) error {
	var paths []string
	if html != "" {
		paths = append(paths, html)
	}
	if figures != "" {
		paths = append(paths, r.figurePaths(figures)...)
	}
	if tables != "" {
		paths = append(paths, r.tablePaths(tables)...)
	}
	for _, p := range paths {
		if err := record.CheckOutput(p, runDirs(r.Runs)...); err != nil {
			return err
		}
	}
	return nil
}

// create is os.Create for a file of the report, refusing a run's own files.
func (r *Report) create(path string) (*os.File, error) {
	if err := record.CheckOutput(path, runDirs(r.Runs)...); err != nil {
		return nil, err
	}
	return os.Create(path)
}

// writeFile is os.WriteFile for a file of the report, refusing a run's own
// files.
func (r *Report) writeFile(path string, b []byte) error {
	if err := record.CheckOutput(path, runDirs(r.Runs)...); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// WriteHTML writes the self-contained page.
func (r *Report) WriteHTML(path string) error {
	f, err := r.create(path)
	if err != nil {
		return err
	}
	if err := page.Execute(f, r); err != nil {
		f.Close()
		return fmt.Errorf("render %s: %w", path, err)
	}
	return f.Close()
}

// WriteFigures writes every figure as SVG and PNG (150 dpi) into dir.
func (r *Report) WriteFigures(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, fg := range r.Figures {
		svgPath := filepath.Join(dir, fg.ID+".svg")
		if err := r.writeFile(svgPath, []byte(fg.SVG)); err != nil {
			return written, err
		}
		png, err := fg.Chart.PNG(figW, figH, 150)
		if err != nil {
			return written, fmt.Errorf("figure %s as PNG: %w", fg.ID, err)
		}
		pngPath := filepath.Join(dir, fg.ID+".png")
		if err := r.writeFile(pngPath, png); err != nil {
			return written, err
		}
		written = append(written, svgPath, pngPath)
	}
	return written, nil
}

// WriteTables writes every table as CSV and all the numbers as tables.json.
func (r *Report) WriteTables(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, t := range r.Tables {
		p := filepath.Join(dir, t.ID+".csv")
		f, err := r.create(p)
		if err != nil {
			return written, err
		}
		w := csv.NewWriter(f)
		var head []string
		for _, c := range t.Columns {
			head = append(head, export.SafeCell(c))
		}
		_ = w.Write(head)
		for _, row := range t.Rows {
			var rec []string
			for _, c := range row {
				rec = append(rec, export.SafeCell(c.Text)) // mode names are imported tags
			}
			_ = w.Write(rec)
		}
		w.Flush()
		if err := w.Error(); err != nil {
			f.Close()
			return written, err
		}
		if err := f.Close(); err != nil {
			return written, err
		}
		written = append(written, p)
	}
	p := filepath.Join(dir, "tables.json")
	b, err := json.MarshalIndent(r.Data, "", "  ")
	if err != nil {
		return written, fmt.Errorf("tables.json: %w", err)
	}
	if err := r.writeFile(p, append(b, '\n')); err != nil {
		return written, err
	}
	return append(written, p), nil
}

// WriteSummary prints a one-screen text summary: per mode, the median
// transfer rate and latency with their ratios, and what was skipped.
func (r *Report) WriteSummary(w io.Writer) {
	for _, s := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
	if len(r.cases) > 0 {
		_ = WriteCaseTables(w, r.cases, r.caseRefText())
	}
	if len(r.Data.Summary["transfer"]) > 0 {
		r.writePingPongSummary(w)
	}
	_ = r.writeDriverSummary(w)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func (r *Report) writePingPongSummary(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tsamples\ttransfer MB/s\tvs ref\tlatency ms\tvs ref\t")
	tr, lat := r.Data.Summary["transfer"], r.Data.Summary["latency"]
	for i, row := range tr {
		l := DataSummary{}
		if i < len(lat) {
			l = lat[i]
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", row.Series, row.N, num(row.Median.Value, 1), pct(row.Median.Percent), num(l.Median.Value, 3), pct(l.Median.Percent))
	}
	tw.Flush()
	if r.Split > 0 && len(r.Data.SmallBig["transfer"]) > 0 {
		fmt.Fprintf(w, "\ntransfer rate vs %s, small (< %d B) / big messages:", r.Reference, r.Split)
		for _, s := range r.Data.SmallBig["transfer"] {
			if s.Series != r.Reference {
				fmt.Fprintf(w, "  %s %s/%s", s.Series, num(s.Small*100, 0)+"%", num(s.Big*100, 0)+"%")
			}
		}
		fmt.Fprintln(w)
	}
}

// num is textSig for the page's dash ("–").
func num(v Num, minPrec int) string { return f(float64(v), sigPrec(float64(v), minPrec)) }

func pct(v Num) string {
	s := f(float64(v), 1)
	if s == "–" || strings.HasPrefix(s, "-") {
		return s + " %"
	}
	return "+" + s + " %"
}
