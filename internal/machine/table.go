package machine

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/cnperf/cnperf/internal/report"
)

// MaxProfiles bounds the profiles one compare or report takes.
const MaxProfiles = 64

// LoadAll reads profile files; any bad one, or more than MaxProfiles, is
// bad input.
func LoadAll(paths []string) ([]Profile, error) {
	if len(paths) > MaxProfiles {
		return nil, fmt.Errorf("%d profiles, more than %d", len(paths), MaxProfiles)
	}
	var ps []Profile
	for _, p := range paths {
		prof, err := Load(p)
		if err != nil {
			return nil, err
		}
		ps = append(ps, prof)
	}
	return ps, nil
}

// WriteText prints a profile's features, one a line, and why each
// missing one was skipped.
func (p Profile) WriteText(w io.Writer) {
	for _, ft := range Features {
		if v, ok := p.Features[ft.Key]; ok {
			fmt.Fprintf(w, "%-17s %14.6g %s\n", ft.Title, v, ft.Unit)
		} else {
			fmt.Fprintf(w, "%-17s %14s (%s)\n", ft.Title, "-", p.Skipped[ft.Key])
		}
	}
}

// WriteJSON prints the matrix as one indented JSON document: the names,
// the similarities (null where two profiles share no feature) and how
// many features each pair compared.
func (mx Matrix) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(struct {
		Names    []string     `json:"names"`
		Matrix   [][]*float64 `json:"similarity"`
		Features [][]int      `json:"features_compared"`
	}{mx.Names, mx.JSONValues(), mx.Features}, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// SimilarityTable is the report's table of the profiles' similarity
// matrix (`cnperf report --profiles`).
func SimilarityTable(ps []Profile) report.Table {
	mx := Compare(ps)
	t := report.Table{ID: "tab-machines", Title: "Machine similarity",
		Caption: "EasyCompare's similarity of the machine profiles given (cnperf machine profile): 1 − the mean over the features both have of (1 − min/max)²; 1 is alike.",
		Columns: append([]string{"profile", "machine", "profiled"}, mx.Names...)}
	for i, p := range ps {
		row := []report.Cell{{Text: p.Name}, {Text: fmt.Sprintf("%s, %d CPUs", p.Machine.CPUModel, p.Machine.CPUs)}, {Text: p.Created.Format(time.DateOnly)}}
		for _, v := range mx.Values[i] {
			row = append(row, report.Cell{Text: Cell(v)})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
