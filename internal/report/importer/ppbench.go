package importer

import (
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/cnperf/cnperf/internal/record"
)

// ppbench's column names (export.PPBenchHeader).
const (
	ppMachine     = "Machine Tag"
	ppExperiment  = "Experiment Tag"
	ppPath        = "Document Path"
	ppFailed      = "Failed requests"
	ppConcurrency = "Concurrency Level"
	ppTotal       = "Total transferred"
	ppTime        = "Time per request"
	ppRetries     = "Retries"
	ppCode        = "Response Code"
)

// ppRequired are the columns a sample cannot be made without. "Machine
// Tag", "Failed requests", "Concurrency Level" and "Retries" may be
// missing (then empty or 0); "Transfer rate" and "Requests per second" are
// derived from the others and not read.
var ppRequired = []string{ppExperiment, ppPath, ppTotal, ppTime, ppCode}

// ppAliases: early ppbench logs had a single "Tag" column.
var ppAliases = map[string]string{"tag": "experiment tag"}

var mpingRE = regexp.MustCompile(`/mping/([0-9]+)/?$`)

// PPBench reads a ppbench log (quoted or not; numbers as Go or Ruby
// writes them, "4" or "4.0") and returns one sample per row:
//
//	Mode       Experiment Tag ("untagged" if empty)
//	Labels     {"source": "ppbench", "machine": Machine Tag} (machine only if not empty)
//	Size       n of Document Path ".../mping/n"; else Total transferred
//	Length     Total transferred (ppbench: median over the repetitions), rounded
//	DurationMS Time per request (ppbench: mean over the repetitions, ms)
//	LatencyMS  0: ppbench does not measure the outer time
//	Code       Response Code (of the first repetition)
//	Retries    Retries (sum over the repetitions)
//	Rep        how many earlier rows had the same mode and size
//
// A row with Failed requests > 0 keeps its values (as ppbench's log does:
// its time is the mean over all answered repetitions, failed ones
// included), so a row whose code is 200 still counts as a success. Only a
// row whose Time per request is 0 gets Error ("ppbench: N failed requests
// in this row", or "ppbench: time per request is 0 ms" if none failed): it
// has no transfer rate, and ppbench's own loader drops it. A row with a
// non-numeric or negative value, or the wrong number of fields, is skipped
// and listed in Info.Skipped; a missing required column is an error.
func PPBench(r io.Reader, source string) ([]record.Sample, Info, error) {
	info := Info{Format: "ppbench", Source: source}
	t, err := openTable(r, &info, ppRequired, ppAliases, func(col map[string]int) string {
		if _, ok := col["document length"]; ok {
			return "this looks like an apachebench CSV: use --format ab"
		}
		return ""
	})
	if err != nil {
		return nil, info, err
	}
	sizeFromLength := 0
	samples, err := readRows(t, &info, func(rec []string, _ int) (record.Sample, int, int, error) {
		s, failed, conc, pathOK, err := ppRow(t, rec)
		if err == nil && !pathOK {
			sizeFromLength++
		}
		return s, conc, failed, err
	})
	if err != nil {
		return nil, info, err
	}
	if sizeFromLength > 0 {
		info.Notes = append(info.Notes, fmt.Sprintf("%d rows: Document Path is not /mping/SIZE; the size is their Total transferred", sizeFromLength))
	}
	return samples, info, info.finish(samples)
}

func ppRow(t *table, rec []string) (s record.Sample, failed, conc int, pathOK bool, err error) {
	tag := t.get(rec, ppExperiment)
	if tag == "" {
		tag = Untagged
	}
	for _, col := range []string{ppExperiment, ppMachine} {
		if err := nameField(col, t.get(rec, col)); err != nil {
			return s, 0, 0, false, err
		}
	}
	length, err := t.bytesField(rec, ppTotal)
	if err != nil {
		return s, 0, 0, false, err
	}
	tpr, err := t.num(rec, ppTime)
	if err != nil {
		return s, 0, 0, false, err
	}
	code, err := t.count(rec, ppCode)
	if err != nil {
		return s, 0, 0, false, err
	}
	if failed, err = t.optCount(rec, ppFailed); err != nil {
		return s, 0, 0, false, err
	}
	if conc, err = t.optCount(rec, ppConcurrency); err != nil {
		return s, 0, 0, false, err
	}
	retries, err := t.optCount(rec, ppRetries)
	if err != nil {
		return s, 0, 0, false, err
	}
	size := length
	if m := mpingRE.FindStringSubmatch(t.get(rec, ppPath)); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n > maxBytes {
			return s, 0, 0, false, badField(ppPath, t.get(rec, ppPath), "size out of range")
		}
		size, pathOK = n, true
	}
	labels := map[string]string{"source": "ppbench"}
	if m := t.get(rec, ppMachine); m != "" {
		labels["machine"] = m
	}
	s = record.Sample{
		Workload:   "pingpong",
		Mode:       tag,
		Labels:     labels,
		Size:       size,
		DurationMS: tpr,
		Length:     length,
		Code:       code,
		Retries:    retries,
	}
	if tpr == 0 {
		if failed > 0 {
			s.Error = fmt.Sprintf("ppbench: %d failed requests in this row", failed)
		} else {
			s.Error = "ppbench: time per request is 0 ms"
		}
	}
	return s, failed, conc, pathOK, nil
}
