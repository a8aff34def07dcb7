package importer

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"

	"github.com/cnperf/cnperf/internal/record"
)

// The apachebench-derived CSV's columns.
const (
	abTag         = "Tag"
	abPath        = "Document Path"
	abLength      = "Document Length"
	abTimeTaken   = "Time taken for tests"
	abComplete    = "Complete requests"
	abFailed      = "Failed requests"
	abConcurrency = "Concurrency Level"
	abTime        = "Time per request"
)

// abRequired are the columns a sample cannot be made without. "Document
// Path" and "Time taken for tests" are optional (they are only used for
// checks); "Total transferred", "Requests per second (mean)" and
// "Transfer rate" are aggregates over all requests, headers included, and
// are not read.
var abRequired = []string{abTag, abLength, abComplete, abFailed, abConcurrency, abTime}

var lastNumberRE = regexp.MustCompile(`/([0-9]+)/?$`)

// ApacheBench reads the apachebench-derived CSV (header "Tag,Document
// Path,Document Length,Time taken for tests,Complete requests,Failed
// requests,Concurrency Level,Total transferred,Requests per second
// (mean),Transfer rate,Time per request"; one row per tag and message
// size) and returns one sample per row:
//
//	Mode       Tag ("untagged" if empty)
//	Labels     {"source": "apachebench", "concurrency": Concurrency Level}
//	Size       Document Length
//	Length     Document Length
//	DurationMS Time per request (ms): ab's "Time per request (mean)",
//	           concurrency × time taken / complete requests, the time one
//	           request took from its client's point of view
//	LatencyMS  0: no outer time
//	Code       200; 0 with Error "apachebench: all N requests failed" when
//	           Failed requests == Complete requests
//	Error      also "apachebench: time per request is 0 ms" when it is
//	           (the row has no transfer rate)
//
// ab prints two "Time per request" lines: the mean per request (above)
// and the mean "across all concurrent requests", time taken / complete
// requests, which is the first divided by the concurrency. cnperf's and
// ppbench's durations are per request, so Length/DurationMS is a
// per-request transfer rate only with the first. When the file has "Time
// taken for tests", the column is checked against both: a value that
// matches only the across-all mean is multiplied by the concurrency, and
// Info.Notes says so; a value that matches neither is used as it is, with
// a note.
func ApacheBench(r io.Reader, source string) ([]record.Sample, Info, error) {
	info := Info{Format: "apachebench", Source: source, Repeats: true}
	t, err := openTable(r, &info, abRequired, nil, func(col map[string]int) string {
		if _, ok := col["experiment tag"]; ok {
			return "this looks like a ppbench CSV: use --format ppbench"
		}
		return ""
	})
	if err != nil {
		return nil, info, err
	}
	var samples []record.Sample
	reps := repCounter{}
	var across, mismatch []int // lines
	pathDiffers := 0
	for {
		rec, line, ok, err := t.next()
		if err != nil {
			return nil, info, err
		}
		if !ok {
			break
		}
		s, r, err := abRow(t, rec)
		if err != nil {
			info.skip(line, "%v", err)
			continue
		}
		switch r.timeKind {
		case timeAcross:
			across = append(across, line)
		case timeMismatch:
			mismatch = append(mismatch, line)
		}
		if r.pathDiffers {
			pathDiffers++
		}
		s.Rep = reps.next(s.Mode, s.Size)
		if err := info.addExperiment(s.Mode, line); err != nil {
			return nil, info, err
		}
		samples = append(samples, s)
		info.addConcurrency(r.concurrency)
		info.FailedRequests += r.failed
	}
	if len(across) > 0 {
		info.Notes = append(info.Notes, fmt.Sprintf("%d rows (lines %s): Time per request is ab's mean across all concurrent requests; multiplied by the concurrency", len(across), lineList(across)))
	}
	if len(mismatch) > 0 {
		info.Notes = append(info.Notes, fmt.Sprintf("%d rows (lines %s): Time per request matches neither concurrency × time taken / complete requests nor time taken / complete requests; used as given", len(mismatch), lineList(mismatch)))
	}
	if pathDiffers > 0 {
		info.Notes = append(info.Notes, fmt.Sprintf("%d rows: the size in Document Path differs from Document Length; size and length are Document Length", pathDiffers))
	}
	if len(info.Concurrency) > 1 {
		info.Notes = append(info.Notes, fmt.Sprintf("the rows have different concurrency levels %v", info.Concurrency))
	}
	return samples, info, info.finish(samples)
}

// How a row's Time per request was read.
const (
	timeMean     = iota // ab's per-request mean (or not checkable)
	timeAcross          // ab's across-all mean, multiplied by the concurrency
	timeMismatch        // matches neither; used as given
)

type abRowInfo struct {
	concurrency, failed int
	timeKind            int
	pathDiffers         bool
}

func abRow(t *table, rec []string) (record.Sample, abRowInfo, error) {
	var ri abRowInfo
	tag := t.get(rec, abTag)
	if tag == "" {
		tag = Untagged
	}
	if err := nameField(abTag, tag); err != nil {
		return record.Sample{}, ri, err
	}
	length, err := t.count(rec, abLength)
	if err != nil {
		return record.Sample{}, ri, err
	}
	complete, err := t.count(rec, abComplete)
	if err != nil {
		return record.Sample{}, ri, err
	}
	if ri.failed, err = t.count(rec, abFailed); err != nil {
		return record.Sample{}, ri, err
	}
	if ri.failed > complete {
		return record.Sample{}, ri, rowError{fmt.Sprintf("%s %d exceeds %s %d", abFailed, ri.failed, abComplete, complete)}
	}
	if ri.concurrency, err = t.count(rec, abConcurrency); err != nil {
		return record.Sample{}, ri, err
	}
	if ri.concurrency < 1 {
		return record.Sample{}, ri, badField(abConcurrency, t.get(rec, abConcurrency), "must be at least 1")
	}
	tpr, err := t.num(rec, abTime)
	if err != nil {
		return record.Sample{}, ri, err
	}
	if t.get(rec, abTimeTaken) != "" && complete > 0 {
		taken, err := t.num(rec, abTimeTaken)
		if err != nil {
			return record.Sample{}, ri, err
		}
		tpr, ri.timeKind = abDuration(tpr, taken, complete, ri.concurrency)
	}
	if m := lastNumberRE.FindStringSubmatch(t.get(rec, abPath)); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n != length {
			ri.pathDiffers = true
		}
	}
	s := record.Sample{
		Workload:   "pingpong",
		Mode:       tag,
		Labels:     map[string]string{"source": "apachebench", "concurrency": strconv.Itoa(ri.concurrency)},
		Size:       length,
		DurationMS: tpr,
		Length:     length,
		Code:       200,
	}
	switch {
	case ri.failed == complete:
		s.Code = 0
		if complete == 0 {
			s.Error = "apachebench: no complete requests"
		} else {
			s.Error = fmt.Sprintf("apachebench: all %d requests failed", complete)
		}
	case tpr == 0:
		// No time, no transfer rate: as ppbench's rows of 0 ms, a failure.
		s.Error = "apachebench: time per request is 0 ms"
	}
	return s, ri, nil
}

// abDuration checks the file's time per request v (ms) against ab's two
// means computed from time taken (s), complete requests n and concurrency
// c, allowing for ab's rounding to 3 decimals and 1 % more, and returns
// the per-request mean.
func abDuration(v, taken float64, n, c int) (float64, int) {
	mean := float64(c) * taken * 1000 / float64(n)
	across := taken * 1000 / float64(n)
	// taken is printed to the ms: ±0.5 ms over n requests; v to the µs.
	tolMean := float64(c)*0.5/float64(n) + 0.0005 + 0.01*mean
	tolAcross := 0.5/float64(n) + 0.0005 + 0.01*across
	dMean, dAcross := math.Abs(v-mean), math.Abs(v-across)
	switch {
	case c > 1 && dAcross < dMean && dAcross <= tolAcross:
		return v * float64(c), timeAcross
	case dMean <= tolMean:
		return v, timeMean
	default:
		return v, timeMismatch
	}
}

func lineList(lines []int) string {
	const maxLines = 5
	s := ""
	for i, l := range lines {
		if i == maxLines {
			return s + ", …"
		}
		if i > 0 {
			s += ", "
		}
		s += strconv.Itoa(l)
	}
	return s
}
