package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Kinds of envelope lines, as iperf3 -J's start, intervals and end.
const (
	KindStart    = "start"    // before measuring: where to and with what settings
	KindInterval = "interval" // one reporting interval (or one stream's)
	KindEnd      = "end"      // the total: the record analysis reads
)

// Envelope is the shape of every line a client prints with --json:
//
//	{"workload":"rr","kind":"end", ...the workload's own fields}
//
// One line per event, written as it happens, so that an interrupted client
// leaves every line so far. The workload's fields sit beside workload and
// kind, as its record always printed them: a run stored before the
// envelope holds the same fields without kind, and both read alike.
type Envelope struct {
	Workload string
	Kind     string
	Payload  json.RawMessage // the whole line: workload, kind and the fields
}

// Decode reads one envelope line.
func Decode(line []byte) (Envelope, error) {
	var head struct {
		Workload string `json:"workload"`
		Kind     string `json:"kind"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return Envelope{}, fmt.Errorf("not a JSON object: %w", err)
	}
	switch {
	case head.Workload == "":
		return Envelope{}, errors.New("no workload")
	case head.Kind != KindStart && head.Kind != KindInterval && head.Kind != KindEnd:
		return Envelope{}, fmt.Errorf("kind %q is none of start, interval, end", head.Kind)
	}
	return Envelope{Workload: head.Workload, Kind: head.Kind, Payload: line}, nil
}

// Start is a start line's fields: the server and the client's settings,
// every flag with its value.
type Start struct {
	Server   string            `json:"server"`
	Settings map[string]string `json:"settings,omitempty"`
}

// Printer prints a workload's envelope lines. Safe for concurrent use.
type Printer struct {
	mu       sync.Mutex
	w        io.Writer
	workload string
}

// NewPrinter prints the envelope lines of workload to w.
func NewPrinter(w io.Writer, workload string) *Printer {
	return &Printer{w: w, workload: workload}
}

// Print writes one line of the kind with v's fields (v must marshal to a
// JSON object; a "workload" field in it must be the printer's, and it must
// have no "kind").
func (p *Printer) Print(kind string, v any) error {
	line, err := p.line(kind, v)
	if err != nil {
		return fmt.Errorf("%s %s line: %w", p.workload, kind, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err = p.w.Write(line)
	return err
}

// line builds the envelope: workload and kind first, then v's fields in
// their order.
func (p *Printer) line(kind string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("%T is not a JSON object", v)
	}
	var buf bytes.Buffer
	name, _ := json.Marshal(p.workload)
	k, _ := json.Marshal(kind)
	fmt.Fprintf(&buf, `{"workload":%s,"kind":%s`, name, k)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := t.(string) // an object's key
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		switch key {
		case "kind":
			return nil, fmt.Errorf("%T has a field kind of its own", v)
		case "workload":
			if !bytes.Equal(val, name) {
				return nil, fmt.Errorf("%T says workload %s", v, val)
			}
			continue
		}
		kb, _ := json.Marshal(key)
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(val)
	}
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}
