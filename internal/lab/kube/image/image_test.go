package image

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteMakesAnImageBothFormatsRead: the tar holds an OCI layout whose
// index, manifest, config and layer match their digests, a docker-archive
// manifest naming the same blobs, and the binary at /cnperf, executable.
func TestWriteMakesAnImageBothFormatsRead(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "cnperf")
	if err := os.WriteFile(exe, []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, exe, "cnperf/workload:v1"); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[h.Name] = b
	}
	for name, b := range files {
		if d, ok := strings.CutPrefix(name, "blobs/sha256/"); ok && d != "" {
			sum := sha256.Sum256(b)
			if hex.EncodeToString(sum[:]) != d {
				t.Errorf("blob %s does not match its digest", name)
			}
		}
	}
	var index struct {
		Manifests []struct {
			Digest      string
			Annotations map[string]string
		}
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v %s", err, files["index.json"])
	}
	if got := index.Manifests[0].Annotations["io.containerd.image.name"]; got != "docker.io/cnperf/workload:v1" {
		t.Errorf("containerd name %q", got)
	}
	var man struct {
		Config struct{ Digest string }
		Layers []struct{ Digest string }
	}
	if err := json.Unmarshal(files[blob(index.Manifests[0].Digest)], &man); err != nil || len(man.Layers) != 1 {
		t.Fatalf("manifest: %v", err)
	}
	var docker []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &docker); err != nil || len(docker) != 1 ||
		docker[0].Config != blob(man.Config.Digest) || docker[0].RepoTags[0] != "cnperf/workload:v1" {
		t.Fatalf("manifest.json: %v %s", err, files["manifest.json"])
	}
	lt := tar.NewReader(bytes.NewReader(files[blob(man.Layers[0].Digest)]))
	h, err := lt.Next()
	if err != nil || h.Name != "cnperf" || h.Mode&0o111 == 0 {
		t.Fatalf("layer: %v %+v", err, h)
	}
	if b, _ := io.ReadAll(lt); string(b) != "#!binary" {
		t.Errorf("layer holds %q", b)
	}
}

func TestRefs(t *testing.T) {
	for _, tc := range []struct {
		ref, full, tag string
		ok             bool
	}{
		{"cnperf", "docker.io/library/cnperf", "latest", true},
		{"registry.local:5000/team/cnperf:v2", "registry.local:5000/team/cnperf", "v2", true},
		{"Upper/case", "", "", false},
		{"bad tag:", "", "", false},
		{"a:b:c", "", "", false},
	} {
		if err := CheckRef(tc.ref); (err == nil) != tc.ok {
			t.Errorf("CheckRef(%q) = %v", tc.ref, err)
			continue
		}
		if !tc.ok {
			continue
		}
		name, tag := splitRef(tc.ref)
		if fullName(name) != tc.full || tag != tc.tag {
			t.Errorf("%q: %s %s", tc.ref, fullName(name), tag)
		}
	}
}
