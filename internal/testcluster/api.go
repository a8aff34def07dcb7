package testcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// api is the few calls `cnperf cluster` makes to its API server, as the
// admin, through the relay on 127.0.0.1: plain HTTPS and JSON, so that
// bringing a cluster up needs neither kubectl nor client-go's clientset.
type api struct {
	base string
	hc   *http.Client
}

func newAPI(dir string, port int) (*api, error) {
	ca, err := os.ReadFile(filepath.Join(dir, "pki", "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "pki", "admin.crt"), filepath.Join(dir, "pki", "admin.key"))
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	return &api{base: fmt.Sprintf("https://127.0.0.1:%d", port), hc: &http.Client{Transport: tr, Timeout: 10 * time.Second}}, nil
}

// do sends body (JSON, or a string as it is) and decodes the answer into
// out; an answer other than 2xx is an error with the server's message.
func (a *api) do(ctx context.Context, method, path, ctype string, body, out any) error {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return err
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, r)
	if err != nil {
		return err
	}
	if ctype == "" {
		ctype = "application/json"
	}
	req.Header.Set("Content-Type", ctype)
	resp, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var st struct{ Message string }
		if json.Unmarshal(b, &st) == nil && st.Message != "" {
			return &apiError{code: resp.StatusCode, msg: st.Message}
		}
		return &apiError{code: resp.StatusCode, msg: strings.TrimSpace(string(b))}
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

type apiError struct {
	code int
	msg  string
}

func (e *apiError) Error() string { return fmt.Sprintf("API server: %d %s", e.code, e.msg) }

// create posts an object, leaving one that exists as it is.
func (a *api) create(ctx context.Context, path string, obj any) error {
	err := a.do(ctx, http.MethodPost, path, "", obj, nil)
	if e, ok := err.(*apiError); ok && e.code == http.StatusConflict {
		return nil
	}
	return err
}

// node is what cnperf reads of a Node.
type node struct {
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		PodCIDR  string                         `json:"podCIDR"`
		PodCIDRs []string                       `json:"podCIDRs"`
		Taints   []struct{ Key, Effect string } `json:"taints"`
	} `json:"spec"`
	Status struct {
		Conditions []struct{ Type, Status, Reason, Message string } `json:"conditions"`
		Addresses  []struct{ Type, Address string }                 `json:"addresses"`
	} `json:"status"`
}

func (n node) ready() bool {
	for _, c := range n.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

// notReady is why a node is not Ready (or not yet schedulable), in the
// kubelet's or the taint's words.
func (n node) notReady() string {
	if n.ready() && len(n.Spec.Taints) > 0 {
		return "tainted " + n.Spec.Taints[0].Key
	}
	for _, c := range n.Status.Conditions {
		if c.Type == "Ready" {
			return c.Reason + ": " + c.Message
		}
	}
	return "no Ready condition yet"
}

func (a *api) nodes(ctx context.Context) ([]node, error) {
	var list struct{ Items []node }
	err := a.do(ctx, http.MethodGet, "/api/v1/nodes", "", nil, &list)
	return list.Items, err
}
