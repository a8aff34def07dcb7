package engine

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/docker/docker/client"
)

// An engine reached over tcp:// without TLS gives whoever reaches its port
// root on its machine. cnperf speaks TLS to it as the docker CLI does: with
// the files a spec names (engines.tls), else those of DOCKER_CERT_PATH
// when DOCKER_TLS_VERIFY or DOCKER_TLS is set, and for a docker context
// with the context's own TLS material. Plain tcp:// to another machine
// still works, with a one-line warning (Warning).

// TLS is the material cnperf reaches an engine with: the CA that signed
// the engine's certificate (none: the system's roots) and the client's
// certificate and key (none: no client certificate). SkipVerify encrypts
// without checking the engine's certificate (DOCKER_TLS without
// DOCKER_TLS_VERIFY, a context's SkipTLSVerify, engines.tls.verify:
// false).
type TLS struct {
	CA         string `json:"ca,omitempty"`
	Cert       string `json:"cert,omitempty"`
	Key        string `json:"key,omitempty"`
	SkipVerify bool   `json:"skip_verify,omitempty"`
}

// maxTLSFile bounds a PEM file or a context's meta.json: both are a few
// kilobytes, and cnperf reads them whole.
const maxTLSFile = 1 << 20

// Environment variables the docker CLI reads for TLS.
const (
	envCertPath  = "DOCKER_CERT_PATH"
	envTLSVerify = "DOCKER_TLS_VERIFY"
	envTLS       = "DOCKER_TLS"
	envConfig    = "DOCKER_CONFIG"
)

// envTLSFiles is the TLS material the docker CLI's environment gives a
// tcp:// engine (nil: none, plain tcp://): DOCKER_TLS_VERIFY or DOCKER_TLS
// set turns TLS on, verifying the engine only with DOCKER_TLS_VERIFY;
// DOCKER_CERT_PATH (default: the docker config directory) holds ca.pem,
// cert.pem and key.pem, each used if present. DOCKER_CERT_PATH alone turns
// TLS on too, as it does for the Docker SDK.
func envTLSFiles(getenv func(string) string) *TLS {
	verify := getenv(envTLSVerify) != ""
	dir := getenv(envCertPath)
	if !verify && dir == "" && getenv(envTLS) == "" {
		return nil
	}
	if dir == "" {
		dir = configDir(getenv)
	}
	t := &TLS{SkipVerify: !verify}
	t.pemFiles(dir)
	return t
}

// pemFiles sets the CA, certificate and key to dir's ca.pem, cert.pem and
// key.pem, each that exists, as the docker CLI finds them, and says
// whether any did.
func (t *TLS) pemFiles(dir string) (found bool) {
	for _, f := range []struct {
		dst  *string
		name string
	}{{&t.CA, "ca.pem"}, {&t.Cert, "cert.pem"}, {&t.Key, "key.pem"}} {
		p := filepath.Join(dir, f.name)
		if _, err := os.Stat(p); err == nil {
			*f.dst, found = p, true
		}
	}
	return found
}

// configDir is the docker CLI's configuration directory: $DOCKER_CONFIG,
// else ~/.docker.
func configDir(getenv func(string) string) string {
	if d := getenv(envConfig); d != "" {
		return d
	}
	return filepath.Join(getenv("HOME"), ".docker")
}

// Config builds the client's TLS configuration, reading each file with a
// bound; a CA file that holds no certificate, or a certificate without its
// key, is an error naming the file.
func (t *TLS) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.SkipVerify} // #nosec G402 -- only when the user asks to skip verification
	if t.CA != "" {
		b, err := readBounded(t.CA, maxTLSFile)
		if err != nil {
			return nil, fmt.Errorf("tls ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("tls ca %s: no PEM certificate in it", t.CA)
		}
		cfg.RootCAs = pool // only this CA, as the docker CLI does
	}
	switch {
	case t.Cert != "" && t.Key != "":
		cert, err := readBounded(t.Cert, maxTLSFile)
		if err != nil {
			return nil, fmt.Errorf("tls cert: %w", err)
		}
		key, err := readBounded(t.Key, maxTLSFile)
		if err != nil {
			return nil, fmt.Errorf("tls key: %w", err)
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("tls cert %s and key %s: %w", t.Cert, t.Key, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case t.Cert != "":
		return nil, fmt.Errorf("tls cert %s: no key beside it (key.pem)", t.Cert)
	case t.Key != "":
		return nil, fmt.Errorf("tls key %s: no certificate beside it (cert.pem)", t.Key)
	}
	return cfg, nil
}

// clientOpts makes the Docker SDK speak TLS: an HTTP client whose
// transport carries the configuration, given before the host so that the
// host's dialer is set on that transport (and the SDK picks https).
func (t *TLS) clientOpts() ([]client.Opt, error) {
	cfg, err := t.Config()
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, CheckRedirect: client.CheckRedirect}
	return []client.Opt{client.WithHTTPClient(hc)}, nil
}

// readBounded reads a regular file of at most max bytes: a FIFO, a device
// or a huge file is refused in one line naming it.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return b, nil
}

// contextDigest names a context's directories in the docker CLI's store:
// the hex SHA-256 of its name.
func contextDigest(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

// readContext reads a docker context's engine from the docker CLI's store
// under dir: contexts/meta/<digest>/meta.json holds {"Name", "Endpoints":
// {"docker": {"Host", "SkipTLSVerify"}}}, and contexts/tls/<digest>/docker/
// holds ca.pem, cert.pem and key.pem when the context has TLS material
// (then tls is set).
func readContext(dir, name string) (host string, t *TLS, err error) {
	digest := contextDigest(name)
	b, err := readBounded(filepath.Join(dir, "contexts", "meta", digest, "meta.json"), maxTLSFile)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil, fmt.Errorf("not found in %s", filepath.Join(dir, "contexts"))
	}
	if err != nil {
		return "", nil, err
	}
	var m struct {
		Name      string
		Endpoints map[string]struct {
			Host          string
			SkipTLSVerify bool
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return "", nil, fmt.Errorf("its meta.json: %w", err)
	}
	if m.Name != name {
		return "", nil, fmt.Errorf("its meta.json names context %q", m.Name)
	}
	ep := m.Endpoints["docker"]
	files := &TLS{SkipVerify: ep.SkipTLSVerify}
	if files.pemFiles(filepath.Join(dir, "contexts", "tls", digest, "docker")) || ep.SkipTLSVerify {
		t = files
	}
	return ep.Host, t, nil
}

// Warning is the one line to print before using an engine reached over
// plain tcp:// on another machine ("" for any other): its port gives
// whoever reaches it root there. A pure function of the resolved
// endpoint, so that no test has to dial anything to judge it.
func Warning(t Target) string {
	if t.Scheme != "tcp" || t.TLS != nil || loopback(t.Addr) {
		return ""
	}
	name := t.URL
	if name != t.Host {
		name += " (" + t.Host + ")"
	}
	return fmt.Sprintf("cnperf: warning: engine %s is plain tcp:// without TLS: whoever reaches that port is root on %s (give it TLS: docs/docker.md#tls)", name, t.Addr)
}

// loopback says whether a host is this machine by its name alone
// (localhost, 127.0.0.0/8, ::1): nothing is resolved.
func loopback(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}
