package engine

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// authority is a CA made for one test: it signs the engine's certificate
// and the client's.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newAuthority(t *testing.T, name string) *authority {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &authority{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a leaf certificate: for the engine (an IP SAN for loopback)
// or for the client; it returns the certificate's and the key's PEM.
func (a *authority) issue(t *testing.T, cn string, serial int64, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// fakeEngine is an HTTPS server on loopback that speaks enough of the
// Docker API for a client to negotiate and ask the version, and that
// demands a client certificate signed by its CA, as dockerd --tlsverify
// does. It records the client certificates it saw.
type fakeEngine struct {
	url  string
	mu   sync.Mutex
	seen []string
}

func startFakeEngine(t *testing.T, ca *authority) *fakeEngine {
	t.Helper()
	certPEM, keyPEM := ca.issue(t, "engine", 2, true)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	f := &fakeEngine{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		for _, c := range r.TLS.PeerCertificates {
			f.seen = append(f.seen, c.Subject.CommonName)
		}
		f.mu.Unlock()
		w.Header().Set("Api-Version", "1.47")
		switch {
		case r.URL.Path == "/_ping":
			_, _ = w.Write([]byte("OK"))
		case strings.HasSuffix(r.URL.Path, "/version"):
			_ = json.NewEncoder(w).Encode(map[string]string{"Version": "28.0.0-fake", "ApiVersion": "1.47"})
		default:
			http.NotFound(w, r)
		}
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	f.url = "tcp://" + srv.Listener.Addr().String()
	return f
}

func (f *fakeEngine) clients() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func writeFile(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTLSEngine: cnperf presents its client certificate and verifies the
// engine's, whether the files come from engines.tls, from the docker
// CLI's environment or from a docker context; without a client
// certificate, without TLS or with another CA it is refused.
func TestTLSEngine(t *testing.T) {
	ca := newAuthority(t, "cnperf test CA")
	other := newAuthority(t, "another CA")
	eng := startFakeEngine(t, ca)
	dir := t.TempDir()
	certPEM, keyPEM := ca.issue(t, "cnperf-client", 3, false)
	files := &TLS{
		CA:   writeFile(t, filepath.Join(dir, "certs", "ca.pem"), ca.pem),
		Cert: writeFile(t, filepath.Join(dir, "certs", "cert.pem"), certPEM),
		Key:  writeFile(t, filepath.Join(dir, "certs", "key.pem"), keyPEM),
	}
	otherCA := writeFile(t, filepath.Join(dir, "other.pem"), other.pem)
	// A docker context with the same material, as `docker context create
	// --docker host=...,ca=...,cert=...,key=...` stores it.
	cfg := filepath.Join(dir, "dockercfg")
	digest := contextDigest("secure")
	writeFile(t, filepath.Join(cfg, "contexts", "meta", digest, "meta.json"),
		[]byte(`{"Name":"secure","Metadata":{},"Endpoints":{"docker":{"Host":"`+eng.url+`","SkipTLSVerify":false}}}`))
	for name, b := range map[string][]byte{"ca.pem": ca.pem, "cert.pem": certPEM, "key.pem": keyPEM} {
		writeFile(t, filepath.Join(cfg, "contexts", "tls", digest, "docker", name), b)
	}
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	tests := []struct {
		name    string
		url     string
		given   *TLS
		env     map[string]string
		wantErr string // "" when the version must be read
	}{
		{"engines.tls", eng.url, files, nil, ""},
		{"environment", eng.url, nil, map[string]string{"DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": filepath.Join(dir, "certs")}, ""},
		{"engines.tls over the environment", eng.url, files, map[string]string{"DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": dir}, ""},
		{"docker context", "secure", nil, map[string]string{"DOCKER_CONFIG": cfg}, ""},
		{"no client certificate", eng.url, &TLS{CA: files.CA}, nil, "certificate"},
		{"another CA", eng.url, &TLS{CA: otherCA, Cert: files.Cert, Key: files.Key}, nil, "certificate signed by unknown authority"},
		{"another CA, not verified", eng.url, &TLS{CA: otherCA, Cert: files.Cert, Key: files.Key, SkipVerify: true}, nil, ""},
		{"plain tcp://", eng.url, nil, nil, "HTTP request to an HTTPS server"},
		{"a CA file with no certificate", eng.url, &TLS{CA: files.Key}, nil, "no PEM certificate"},
		{"a key that is not the certificate's", eng.url, &TLS{CA: files.CA, Cert: files.Cert, Key: writeFile(t, filepath.Join(dir, "k2.pem"), func() []byte { _, k := ca.issue(t, "x", 4, false); return k }())}, nil, "private key does not match"},
		{"a missing file", eng.url, &TLS{CA: filepath.Join(dir, "nosuch.pem")}, nil, "no such file"},
		{"a FIFO", eng.url, &TLS{CA: "/dev/stdin"}, nil, "not a regular file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(eng.clients())
			target, err := Resolve(tc.url, tc.given, env(tc.env))
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			var version string
			cli, err := target.Client()
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				v, verr := cli.ServerVersion(ctx)
				version, err = v.Version, verr
				cli.Close()
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("version: %v", err)
			case tc.wantErr == "" && version != "28.0.0-fake":
				t.Fatalf("version %q, want the fake engine's", version)
			case tc.wantErr == "":
				if seen := eng.clients()[before:]; len(seen) == 0 || seen[0] != "cnperf-client" {
					t.Fatalf("the engine saw client certificates %v, want cnperf-client", seen)
				}
			case err == nil || !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestEnvTLSFiles: the docker CLI's variables turn TLS on and say whether
// to verify; DOCKER_CERT_PATH (else the config directory) holds the files
// that exist.
func TestEnvTLSFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ca.pem"), []byte("x"))
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".docker", "cert.pem"), []byte("x"))
	writeFile(t, filepath.Join(home, ".docker", "key.pem"), []byte("x"))
	tests := []struct {
		name string
		env  map[string]string
		want *TLS
	}{
		{"nothing set", map[string]string{"HOME": home}, nil},
		{"verify, default path", map[string]string{"HOME": home, "DOCKER_TLS_VERIFY": "1"},
			&TLS{Cert: filepath.Join(home, ".docker", "cert.pem"), Key: filepath.Join(home, ".docker", "key.pem")}},
		{"verify, cert path", map[string]string{"HOME": home, "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": dir}, &TLS{CA: filepath.Join(dir, "ca.pem")}},
		{"cert path alone", map[string]string{"DOCKER_CERT_PATH": dir}, &TLS{CA: filepath.Join(dir, "ca.pem"), SkipVerify: true}},
		{"DOCKER_TLS", map[string]string{"DOCKER_TLS": "1", "DOCKER_CONFIG": dir}, &TLS{CA: filepath.Join(dir, "ca.pem"), SkipVerify: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := envTLSFiles(func(k string) string { return tc.env[k] })
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Fatalf("envTLSFiles = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestWarning: plain tcp:// to another machine is warned about in one
// line, judged from the URL alone; loopback, TLS and ssh are not.
func TestWarning(t *testing.T) {
	noEnv := func(string) string { return "" }
	tests := []struct {
		url   string
		given *TLS
		want  string // "" for no warning, else a part of it
	}{
		{"tcp://10.0.0.2:2375", nil, "engine tcp://10.0.0.2:2375 is plain tcp:// without TLS: whoever reaches that port is root on 10.0.0.2"},
		{"tcp://pong.example:2375", nil, "root on pong.example"},
		{"tcp://[2001:db8::1]:2375", nil, "root on 2001:db8::1"},
		{"tcp://10.0.0.2:2376", &TLS{CA: "ca.pem"}, ""},
		{"tcp://127.0.0.1:2375", nil, ""},
		{"tcp://127.8.9.10:2375", nil, ""},
		{"tcp://[::1]:2375", nil, ""},
		{"tcp://localhost:2375", nil, ""},
		{"tcp://LOCALHOST.:2375", nil, ""},
		{"tcp://localhost.example:2375", nil, "root on localhost.example"},
		{"ssh://me@10.0.0.3", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			target, err := Resolve(tc.url, tc.given, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			got := Warning(target)
			switch {
			case tc.want == "" && got != "":
				t.Fatalf("Warning = %q, want none", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Fatalf("Warning = %q, want one containing %q", got, tc.want)
			case strings.Contains(got, "\n"):
				t.Fatalf("Warning = %q: more than one line", got)
			}
		})
	}
	// A context names its engine; the warning names both.
	cfg := t.TempDir()
	writeFile(t, filepath.Join(cfg, "contexts", "meta", contextDigest("far"), "meta.json"), []byte(`{"Name":"far","Endpoints":{"docker":{"Host":"tcp://10.0.0.9:2375"}}}`))
	target, err := Resolve("far", nil, func(k string) string { return map[string]string{"DOCKER_CONFIG": cfg}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got := Warning(target); !strings.Contains(got, "engine far (tcp://10.0.0.9:2375)") {
		t.Fatalf("Warning = %q, want it to name the context and its URL", got)
	}
}

// TestNote: the run dir's note of an engine brings back its TLS, so that
// `clean` reaches it after a crash without the environment it ran in.
func TestNote(t *testing.T) {
	t.Setenv("DOCKER_TLS_VERIFY", "1")
	t.Setenv("DOCKER_CERT_PATH", t.TempDir())
	tests := []struct {
		target Target
		note   string
	}{
		{Target{URL: "tcp://10.0.0.2:2375", Scheme: "tcp"}, "tcp://10.0.0.2:2375"},
		{Target{URL: "tcp://10.0.0.2:2376", Scheme: "tcp", TLS: &TLS{CA: "/c a.pem", Cert: "c.pem", Key: "k.pem"}}, `tcp://10.0.0.2:2376 {"ca":"/c a.pem","cert":"c.pem","key":"k.pem"}`},
		{Target{URL: "tcp://10.0.0.2:2376", Scheme: "tcp", TLS: &TLS{SkipVerify: true}}, `tcp://10.0.0.2:2376 {"skip_verify":true}`},
		{Target{URL: "ssh://me@h", Scheme: "ssh"}, "ssh://me@h"},
		{Target{URL: "unix:///run/docker.sock", Scheme: "unix"}, "unix:///run/docker.sock"},
	}
	for _, tc := range tests {
		t.Run(tc.note, func(t *testing.T) {
			if got := tc.target.note(); got != tc.note {
				t.Fatalf("note = %q, want %q", got, tc.note)
			}
			back, err := noted(tc.note)
			if err != nil {
				t.Fatal(err)
			}
			// The environment's TLS is not the note's: a plain engine
			// stays plain.
			if (back.TLS == nil) != (tc.target.TLS == nil) || back.TLS != nil && *back.TLS != *tc.target.TLS || back.URL != tc.target.URL {
				t.Fatalf("noted(%q) = %+v (TLS %+v), want %+v", tc.note, back, back.TLS, tc.target)
			}
		})
	}
	if _, err := noted(`tcp://10.0.0.2:2376 {"ca":`); err == nil || !strings.Contains(err.Error(), "its TLS note") {
		t.Fatalf("a damaged note: %v, want an error naming it", err)
	}
}

// TestCheckExisting: --docker-host's URL is judged without dialling it:
// a warning for plain tcp:// to another machine, none over the
// environment's TLS or on this machine, and an error for TLS files that
// cannot be used.
func TestCheckExisting(t *testing.T) {
	good, bad := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(good, "ca.pem"), newAuthority(t, "ca").pem)
	writeFile(t, filepath.Join(bad, "ca.pem"), []byte("not a certificate"))
	tests := []struct {
		name, url, certPath string
		warn, wantErr       string
	}{
		{"unix socket", "unix:///var/run/docker.sock", "", "", ""},
		{"plain tcp, loopback", "tcp://127.0.0.1:2375", "", "", ""},
		{"plain tcp, another machine", "tcp://10.0.0.2:2375", "", "root on 10.0.0.2", ""},
		{"tcp over TLS", "tcp://10.0.0.2:2376", good, "", ""},
		{"TLS files that cannot be used", "tcp://10.0.0.2:2376", bad, "", "no PEM certificate"},
		{"no port", "tcp://10.0.0.2", "", "", "want tcp://HOST:PORT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("DOCKER_CERT_PATH", tc.certPath)
			t.Setenv("DOCKER_TLS_VERIFY", map[bool]string{true: "1"}[tc.certPath != ""])
			warn, err := CheckExisting(tc.url)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("CheckExisting(%s) = %v, want an error containing %q", tc.url, err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Fatalf("CheckExisting(%s): %v", tc.url, err)
			case tc.warn == "" && warn != "", tc.warn != "" && !strings.Contains(warn, tc.warn):
				t.Fatalf("CheckExisting(%s) warns %q, want %q", tc.url, warn, tc.warn)
			}
		})
	}
}
