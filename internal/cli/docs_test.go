package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/presets"
)

// A user follows the docs literally: every `cnperf …` line of README.md,
// docs/*.md and the commands' examples must name a command that exists,
// with flags that exist and parse and presets and modes the binary has.
// The lines are parsed by the real command tree, never executed.

// docLine is one cnperf command found in a document.
type docLine struct {
	where string   // file:line
	text  string   // as written, after joining continuations
	args  []string // split shell-like, without the leading cnperf
	block bool     // from a code block (a whole command), not an inline span (often a fragment)
}

func TestDocsCommands(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../../README.md"}, files...)
	var lines []docLine
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, markdownCommands(strings.TrimPrefix(f, "../../"), string(b))...)
	}
	for f, b := range presetTexts(t) {
		lines = append(lines, headerCommands(f, b)...)
	}
	walkCommands(newRoot(drivers.Catalog(), io.Discard, io.Discard), func(c *cobra.Command) {
		lines = append(lines, exampleCommands(c.CommandPath()+" --help", c.Example)...)
	})
	t.Logf("%d cnperf lines", len(lines))
	if len(lines) < 100 {
		t.Fatalf("found %d cnperf lines in the docs; the extraction is broken", len(lines))
	}
	for _, l := range lines {
		if err := parseOnly(drivers.Catalog(), l); err != nil {
			t.Errorf("%s: %s\n\t%v", l.where, l.text, err)
		}
	}
}

// parseOnly runs a doc line through a fresh command tree's parser: the
// subcommand, its flags and their values, its number of arguments, and the
// presets and modes it names. Placeholders (RUN_DIR, N, <x>, …) stand for
// any valid value.
func parseOnly(cat lab.Catalog, l docLine) error {
	root := newRoot(cat, io.Discard, io.Discard)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	cmd, rest, err := root.Find(l.args)
	if err != nil {
		return err
	}
	if len(rest) > 0 && cmd.HasSubCommands() && placeholder(rest[0]) {
		return nil // cnperf WORKLOAD --json, cnperf serve X: any of them
	}
	if cmd.DisableFlagParsing {
		return nil
	}
	cmd.InitDefaultHelpFlag()
	rest = fillPlaceholders(cmd, rest)
	if !l.block && len(rest) > 0 {
		// a span may name a flag without its value: `cnperf report --figures`
		if f := lookupFlag(cmd, rest[len(rest)-1]); f != nil && f.NoOptDefVal == "" && !strings.Contains(rest[len(rest)-1], "=") {
			rest = append(rest, sample(f, "VALUE"))
		}
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	pos := cmd.Flags().Args()
	if cmd.HasSubCommands() && !cmd.Runnable() && len(pos) > 0 {
		return fmt.Errorf("unknown command %q for %q", pos[0], cmd.CommandPath())
	}
	if !cmd.HasParent() && len(pos) > 0 {
		return fmt.Errorf("unknown command %q for cnperf", pos[0])
	}
	if l.block {
		if err := cmd.ValidateArgs(pos); err != nil {
			return err
		}
	}
	if f := cmd.Flags().Lookup("preset"); f != nil && f.Changed {
		if err := knownPreset(f.Value.String()); err != nil {
			return fmt.Errorf("--preset: %w", err)
		}
	}
	if cmd.Name() == "presets" && len(pos) == 1 {
		if err := knownPreset(pos[0]); err != nil {
			return err
		}
	}
	for _, name := range []string{"mode", "modes"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			for _, m := range strings.Split(f.Value.String(), ",") {
				if err := knownMode(cat, m); err != nil {
					return fmt.Errorf("--%s: %w", name, err)
				}
			}
		}
	}
	return nil
}

func knownPreset(name string) error {
	if placeholder(name) || slices.Contains(presets.Names(), name) {
		return nil
	}
	return fmt.Errorf("no preset %q (cnperf presets lists %s)", name, strings.Join(presets.Names(), ", "))
}

func knownMode(cat lab.Catalog, name string) error {
	name = strings.Trim(name, "[]")
	if placeholder(name) {
		return nil
	}
	for _, m := range cat.Modes {
		if m.Name() == name {
			return nil
		}
	}
	return fmt.Errorf("no mode %q", name)
}

// fillPlaceholders gives a placeholder that is a flag's value a value of
// the flag's type (N is 1 for an int, D 1s for a duration).
func fillPlaceholders(cmd *cobra.Command, args []string) []string {
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		tok := out[i]
		if tok == "--" {
			break
		}
		if !strings.HasPrefix(tok, "-") {
			continue
		}
		f := lookupFlag(cmd, tok)
		if f == nil || f.NoOptDefVal != "" {
			continue
		}
		if name, val, ok := strings.Cut(tok, "="); ok {
			if placeholder(val) {
				out[i] = name + "=" + sample(f, val)
			}
			continue
		}
		if i+1 < len(out) && placeholder(out[i+1]) {
			out[i+1] = sample(f, out[i+1])
		}
		i++
	}
	return out
}

// lookupFlag finds the flag a word names (--name, --name=v or -x).
func lookupFlag(cmd *cobra.Command, tok string) *pflag.Flag {
	if strings.HasPrefix(tok, "--") {
		name, _, _ := strings.Cut(tok[2:], "=")
		if f := cmd.Flags().Lookup(name); f != nil {
			return f
		}
		return cmd.InheritedFlags().Lookup(name)
	}
	if len(tok) == 2 && tok[0] == '-' {
		if f := cmd.Flags().ShorthandLookup(tok[1:]); f != nil {
			return f
		}
		return cmd.InheritedFlags().ShorthandLookup(tok[1:])
	}
	return nil
}

func sample(f *pflag.Flag, placeholder string) string {
	t := f.Value.Type()
	switch {
	case t == "duration":
		return "1s"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "1"
	}
	return placeholder
}

var capsWord = regexp.MustCompile(`^[A-Z][A-Z0-9_]*`)

// placeholder: a word that stands for a value (RUN_DIR, FILE.json, K=V,
// MODE:METRIC=PCT, H[:P], <dir>, runs/quick-…, ...).
func placeholder(s string) bool {
	if strings.Contains(s, "…") || strings.Contains(s, "...") || strings.ContainsAny(s, "<>") {
		return true
	}
	m := capsWord.FindString(s)
	if m == "" {
		return false
	}
	rest := s[len(m):]
	return rest == "" || !regexp.MustCompile(`^[a-z]`).MatchString(rest)
}

// markdownCommands finds the cnperf commands of a markdown file: each
// line of a code block (continuations joined), and each inline code span
// of the text (a span may run over the lines of its paragraph).
func markdownCommands(name, text string) []docLine {
	var out []docLine
	lines := strings.Split(text, "\n")
	var para []string
	paraStart := 0
	flush := func() {
		out = append(out, spanCommands(name, paraStart, para)...)
		para = nil
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			flush()
			fence := trimmed[:3]
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
				start := i
				l := lines[i]
				for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
					i++
					l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(lines[i])
				}
				for _, c := range shellCommands(l) {
					out = append(out, docLine{where: fmt.Sprintf("%s:%d", name, start+1), text: c.text, args: c.args, block: true})
				}
			}
			continue
		}
		if trimmed == "" {
			flush()
			continue
		}
		if len(para) == 0 {
			paraStart = i
		}
		para = append(para, line)
	}
	flush()
	return out
}

// spanCommands finds the inline code spans of a paragraph that hold a
// cnperf command.
func spanCommands(name string, start int, para []string) []docLine {
	var out []docLine
	text := strings.Join(para, "\n")
	for i := 0; i < len(text); {
		open := strings.IndexByte(text[i:], '`')
		if open < 0 {
			break
		}
		open += i
		n := open
		for n < len(text) && text[n] == '`' {
			n++
		}
		ticks := text[open:n]
		end := strings.Index(text[n:], ticks)
		if end < 0 {
			break
		}
		span := text[n : n+end]
		i = n + end + len(ticks)
		line := start + strings.Count(text[:open], "\n") + 1
		span = strings.Join(strings.Fields(span), " ")
		for _, c := range shellCommands(tableAlternatives(span)) {
			out = append(out, docLine{where: fmt.Sprintf("%s:%d", name, line), text: c.text, args: c.args})
		}
	}
	return out
}

// tableAlternatives keeps the first of alternatives written a\|b\|c in a
// table cell.
func tableAlternatives(s string) string {
	return regexp.MustCompile(`\\\|[^\s\]]*`).ReplaceAllString(s, "")
}

type shellCommand struct {
	text string
	args []string
}

// shellCommands splits a shell line into its simple commands (cut at |,
// ;, &&, ||, redirections and $(...), whose inner command counts too) and
// returns those that run cnperf, split into words, prompt, sudo and
// variable assignments dropped.
func shellCommands(line string) []shellCommand {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "$ ")
	if strings.HasPrefix(line, "#") {
		return nil
	}
	var out []shellCommand
	var words []string
	var word strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, word.String())
		}
		word.Reset()
		inWord = false
	}
	emit := func() {
		end()
		for len(words) > 0 && (words[0] == "sudo" || regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`).MatchString(words[0])) {
			words = words[1:]
		}
		// cnperf alone names the program; "cnperf siege: ..." quotes its output
		if len(words) > 1 && (words[0] == "cnperf" || words[0] == "./cnperf") && !strings.HasSuffix(words[1], ":") {
			var args []string
			for _, w := range words[1:] {
				if w = cleanWord(w); w != "" {
					args = append(args, w)
				}
			}
			out = append(out, shellCommand{text: strings.Join(words, " "), args: args})
		}
		words = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				j = len(line) - i - 1
			}
			word.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '\\' && i+1 < len(line):
			word.WriteByte(line[i+1])
			inWord = true
			i++
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			depth, j := 1, i+2
			for ; j < len(line) && depth > 0; j++ {
				switch line[j] {
				case '(':
					depth++
				case ')':
					depth--
				}
			}
			out = append(out, shellCommands(line[i+2:j-1])...)
			word.WriteString("SUBSTITUTED")
			inWord = true
			i = j - 1
		case c == ' ' || c == '\t':
			end()
		case c == '#' && !inWord:
			emit()
			return out
		case c == '|' || c == ';' || c == '&':
			emit()
		case c == '>' || c == '<':
			if inWord && regexp.MustCompile(`^[0-9]$`).MatchString(word.String()) {
				word.Reset()
				inWord = false
			}
			end()
			for i+1 < len(line) && (line[i+1] == '>' || line[i+1] == '&') {
				i++
			}
			// the next word is the redirection's target, not an argument
			j := i + 1
			for j < len(line) && line[j] == ' ' {
				j++
			}
			for j < len(line) && !strings.ContainsRune(" |;&", rune(line[j])) {
				j++
			}
			i = j - 1
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	emit()
	return out
}

// cleanWord drops a reference line's optional brackets and repetition
// marks: [--label K=V]... is --label K=V; a lone ... stays a placeholder.
func cleanWord(w string) string {
	if w == "..." || w == "…" {
		return w
	}
	w = strings.TrimSuffix(strings.TrimSuffix(w, "..."), "…")
	return strings.TrimRight(strings.TrimLeft(w, "["), "]")
}

// walkCommands calls f on c and every command below it.
func walkCommands(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, s := range c.Commands() {
		walkCommands(s, f)
	}
}

// headerCommands finds the cnperf commands of a preset's header comment.
func headerCommands(name, text string) []docLine {
	var out []docLine
	for i, l := range strings.Split(text, "\n") {
		body, ok := strings.CutPrefix(l, "#")
		if !ok {
			break // the header ends at the first line that is not a comment
		}
		for _, c := range shellCommands(body) {
			out = append(out, docLine{where: fmt.Sprintf("%s:%d", name, i+1), text: c.text, args: c.args, block: true})
		}
	}
	return out
}

// exampleCommands finds the cnperf commands of a command's Example text.
func exampleCommands(where, example string) []docLine {
	var out []docLine
	lines := strings.Split(example, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		for strings.HasSuffix(strings.TrimSpace(l), `\`) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(strings.TrimSpace(l), `\`) + " " + strings.TrimSpace(lines[i])
		}
		for _, c := range shellCommands(l) {
			out = append(out, docLine{where: where, text: c.text, args: c.args, block: true})
		}
	}
	return out
}

// TestDocsExtraction: what the docs test reads out of markdown and shell.
func TestDocsExtraction(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       [][]string
	}{
		{"code block with prompt and comment", "```sh\n$ cnperf run --preset quick   # the main job\n```\n",
			[][]string{{"run", "--preset", "quick"}}},
		{"continuation", "```\ncnperf run x.yaml \\\n  --modes bare\n```\n", [][]string{{"run", "x.yaml", "--modes", "bare"}}},
		{"pipe, redirection and substitution", "```\nsudo cnperf presets quick > my.yaml && cnperf run my.yaml --kubeconfig $(cnperf cluster kubeconfig t1) 2>&1 | tee log\n```\n",
			[][]string{{"presets", "quick"}, {"cluster", "kubeconfig", "t1"}, {"run", "my.yaml", "--kubeconfig", "SUBSTITUTED"}}},
		{"inline span over two lines", "Run `cnperf run\n--preset seed000` and `ls` then `./cnperf lab down NAME...`.\n",
			[][]string{{"run", "--preset", "seed000"}, {"lab", "down", "NAME"}}},
		{"table alternatives", "| `cnperf export RUN [--format ppbench\\|samples] [--label K=V]...` | x |\n",
			[][]string{{"export", "RUN", "--format", "ppbench", "--label", "K=V"}}},
		{"not a command", "`cnperf` and `cnperf: bad` and\n```\nmode  cnperf\n```\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [][]string
			for _, l := range markdownCommands("x.md", tc.text) {
				got = append(got, l.args)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDocsCatch: the parser check refuses what a reader would be refused.
func TestDocsCatch(t *testing.T) {
	for _, tc := range []struct {
		line  string
		block bool
		bad   bool
	}{
		{"cnperf run --preset quick", true, false},
		{"cnperf run --preset nosuch", true, true},
		{"cnperf presets nosuch", true, true},
		{"cnperf nosuch", true, true},
		{"cnperf lab nosuch", true, true},
		{"cnperf run --nosuch", true, true},
		{"cnperf lab up demo --mode nosuch", true, true},
		{"cnperf lab up NAME --mode MODE --port N", true, false},
		{"cnperf report RUN_DIR... --bins N", true, false},
		{"cnperf report --bins many RUN", true, true},
		{"cnperf summary", false, false},
		{"cnperf version extra", true, true},
		{"cnperf lab exec demo server1 --container -- ip -d link", true, false},
		{"cnperf cluster up t1 --nodes 2 --cni cilium-vxlan", true, false},
	} {
		cmds := shellCommands(tc.line)
		if len(cmds) != 1 {
			t.Fatalf("%s: %d commands", tc.line, len(cmds))
		}
		err := parseOnly(drivers.Catalog(), docLine{text: tc.line, args: cmds[0].args, block: tc.block})
		if (err != nil) != tc.bad {
			t.Errorf("%s: error %v, want bad=%v", tc.line, err, tc.bad)
		}
	}
}

// docFiles returns README.md and every docs/*.md, by their names in the
// repository, with their text.
func docFiles(t *testing.T) map[string]string {
	t.Helper()
	names, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range append(names, "../../README.md") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(f, "../../")] = string(b)
	}
	return files
}

// TestDocsShape: the README is a front door, not a notebook, the docs are
// a reference of bounded length (what was measured belongs to the runs),
// and no doc line is too long to read or review.
func TestDocsShape(t *testing.T) {
	// docs/findings.md is generated from the stored runs, a row a claim: it
	// grows with the presets' claims, not with prose, so it has a bound of
	// its own instead of a share of the reference's, and its rows (a
	// claim's words, its source and figures) are read as a table, not
	// reflowed prose.
	const readmeLines, docsLines, findingsLines, lineChars, rowChars = 150, 3000, 400, 400, 1000
	total := 0
	for name, text := range docFiles(t) {
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		if name == "docs/findings.md" {
			if len(lines) > findingsLines {
				t.Errorf("docs/findings.md has %d lines, more than %d", len(lines), findingsLines)
			}
		} else {
			total += len(lines)
		}
		if name == "README.md" && len(lines) > readmeLines {
			t.Errorf("README.md has %d lines, more than %d: put the detail in docs/", len(lines), readmeLines)
		}
		limit := lineChars
		if name == "docs/findings.md" {
			limit = rowChars
		}
		for i, l := range lines {
			if n := utf8.RuneCountInString(l); n > limit {
				t.Errorf("%s:%d: %d characters, more than %d: reflow it (a table row: make it a list)", name, i+1, n, limit)
			}
		}
	}
	if total > docsLines {
		t.Errorf("README.md and docs/*.md have %d lines, more than %d: say each thing once and link to it", total, docsLines)
	}
}

// TestDocsPathsExist: a path of the repository that a doc names (a
// package to test or fuzz, a script, a preset) exists.
func TestDocsPathsExist(t *testing.T) {
	path := regexp.MustCompile(`(?:^|[\s(\x60'"=])(?:\./)?((?:internal|scripts|presets|bench|cmd|docs|third_party)/[A-Za-z0-9_./-]*)`)
	placeholder := regexp.MustCompile(`[A-Z]{2,}|\*|<|\{|…`)
	for name, text := range docFiles(t) {
		for _, m := range path.FindAllStringSubmatch(text, -1) {
			p := strings.TrimRight(m[1], ".,;:")
			if placeholder.MatchString(p) || p == "bench/out" || strings.HasPrefix(p, "bench/out/") {
				continue // a placeholder, or where bench/run.sh writes (OUT)
			}
			if _, err := os.Stat(filepath.Join("../..", p)); err != nil {
				t.Errorf("%s names %s, which does not exist", name, p)
			}
		}
	}
}

// TestDocsNoTraces: the docs, the presets' headers and the commands' help
// speak to a user on their own machine, not of the machines and habits
// cnperf was developed with.
func TestDocsNoTraces(t *testing.T) {
	traces := []string{"cnperf-lab.lock", "flock ", "lab notes", "lab-notes", "other agents", "quiet Xeon", "the Xeon here"}
	// A doc is read on another machine than it was written on; a command's
	// help is read on the machine it runs on, which it may call this one.
	docTraces := append(slices.Clone(traces), "on this machine")
	texts := docFiles(t)
	for f, b := range presetTexts(t) {
		texts[f] = b
	}
	help := map[string]string{}
	walkCommands(newRoot(drivers.Catalog(), io.Discard, io.Discard), func(c *cobra.Command) {
		h := []string{c.Use, c.Short, c.Long, c.Example}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) { h = append(h, f.Usage) })
		help[c.CommandPath()+" --help"] = strings.Join(h, "\n")
		texts[c.CommandPath()+" --help"] = strings.Join(h, "\n")
	})
	for name, text := range texts {
		forbidden := docTraces
		if _, ok := help[name]; ok {
			forbidden = traces
		}
		for _, tr := range forbidden {
			if i := strings.Index(strings.ToLower(text), strings.ToLower(tr)); i >= 0 {
				t.Errorf("%s: %q at %q", name, tr, text[max(0, i-40):min(len(text), i+len(tr)+40)])
			}
		}
	}
}

// TestFlagValueNames: pflag takes a back-quoted word of a flag's usage as
// the name of its value (--image `+"`cnperf image save`"+` printed
// "--image cnperf image save"): every flag's value name is one word.
func TestFlagValueNames(t *testing.T) {
	walkCommands(newRoot(drivers.Catalog(), io.Discard, io.Discard), func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if name, _ := pflag.UnquoteUsage(f); strings.ContainsAny(name, " \t") {
				t.Errorf("%s --%s: its value is named %q (back quotes in its usage)", c.CommandPath(), f.Name, name)
			}
		})
	})
}

// TestSpecListsEveryPreset: the preset table of docs/spec.md has a row for
// every embedded preset and none for a preset the binary lacks.
func TestSpecListsEveryPreset(t *testing.T) {
	b, err := os.ReadFile("../../docs/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Presets\n")
	if !ok {
		t.Fatal("docs/spec.md has no section ## Presets")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(section, -1) {
		rows = append(rows, m[1])
	}
	names := presets.Names()
	for _, n := range names {
		if !slices.Contains(rows, n) {
			t.Errorf("docs/spec.md's preset table has no row for %s", n)
		}
	}
	for _, r := range rows {
		if !slices.Contains(names, r) {
			t.Errorf("docs/spec.md's preset table has a row for %s, which cnperf presets does not list", r)
		}
	}
}

// presetTexts are the embedded presets' files by repository path.
func presetTexts(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../presets/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(f, "../../")] = string(b)
	}
	return out
}
