// Package image writes cnperf's workload image: one layer holding the
// static binary at /cnperf, as a tar that is both an OCI image layout
// (`ctr images import`, skopeo, crane push) and a docker-archive (`docker
// load`), so a user can put it in their registry or on their nodes.
package image

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strings"
	"time"
)

// MaxBinary bounds the binary the image holds.
const MaxBinary = 1 << 30

var refRE = regexp.MustCompile(`^([a-z0-9.-]+:[0-9]{1,5}/)?[a-z0-9]+([._/-][a-z0-9]+)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$`)

// CheckRef checks an image name ([REGISTRY[:PORT]/]NAME[:TAG],
// lower-case, no scheme).
func CheckRef(ref string) error {
	if !refRE.MatchString(ref) || len(ref) > 255 {
		return fmt.Errorf("image name %q: want NAME[:TAG] (lower-case name, e.g. cnperf/workload:v1)", ref)
	}
	return nil
}

// Write writes the image named ref (NAME[:TAG]) with the binary exe to w.
// Timestamps are fixed, so the same binary makes the same image.
func Write(w io.Writer, exe, ref string) error {
	if err := CheckRef(ref); err != nil {
		return err
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		return fmt.Errorf("read %s: %w", exe, err)
	}
	if len(bin) > MaxBinary {
		return fmt.Errorf("%s: %d bytes, more than %d", exe, len(bin), MaxBinary)
	}
	if err := static(bin); err != nil {
		return fmt.Errorf("%s: %w", exe, err)
	}
	epoch := time.Unix(0, 0).UTC()
	var layer bytes.Buffer
	lt := tar.NewWriter(&layer)
	if err := lt.WriteHeader(&tar.Header{Name: "cnperf", Mode: 0o755, Size: int64(len(bin)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := lt.Write(bin); err != nil {
		return err
	}
	if err := lt.Close(); err != nil {
		return err
	}
	layerDigest := digest(layer.Bytes())
	cfg, _ := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH, "os": "linux", "created": epoch.Format(time.RFC3339),
		"config": map[string]any{"Entrypoint": []string{"/cnperf"}, "Cmd": []string{"pod", "hold"},
			"Labels": map[string]string{"org.opencontainers.image.title": "cnperf workload"}},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{layerDigest}},
		"history": []map[string]any{{"created": epoch.Format(time.RFC3339), "created_by": "cnperf image save"}},
	})
	cfgDigest := digest(cfg)
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cfgDigest, "size": len(cfg)},
		"layers": []map[string]any{{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layerDigest, "size": layer.Len()}},
	})
	manDigest := digest(manifest)
	name, tag := splitRef(ref)
	index, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
		"manifests": []map[string]any{{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manDigest,
			"size": len(manifest), "annotations": map[string]string{
				"io.containerd.image.name":          fullName(name) + ":" + tag,
				"org.opencontainers.image.ref.name": tag,
			}}},
	})
	dockerManifest, _ := json.Marshal([]map[string]any{{"Config": blob(cfgDigest), "RepoTags": []string{name + ":" + tag},
		"Layers": []string{blob(layerDigest)}}})

	tw := tar.NewWriter(w)
	files := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{blob(layerDigest), layer.Bytes()},
		{blob(cfgDigest), cfg},
		{blob(manDigest), manifest},
		{"index.json", index},
		{"manifest.json", dockerManifest},
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: dir, Mode: 0o755, ModTime: epoch, Typeflag: tar.TypeDir}); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// static refuses a dynamically linked ELF binary: the image holds nothing
// but the binary, so one that needs a loader and libc (built without
// CGO_ENABLED=0) fails in the pod with "exec /cnperf: no such file".
func static(bin []byte) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return nil // not ELF: a script or test stand-in, the user's affair
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("dynamically linked (an ELF interpreter), and the image has no libc: build it with CGO_ENABLED=0")
		}
	}
	return nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func blob(d string) string { return "blobs/sha256/" + d[len("sha256:"):] }

// splitRef splits NAME[:TAG]; the tag defaults to latest.
func splitRef(ref string) (string, string) {
	for i := len(ref) - 1; i >= 0 && ref[i] != '/'; i-- {
		if ref[i] == ':' {
			return ref[:i], ref[i+1:]
		}
	}
	return ref, "latest"
}

// fullName is the name as containerd stores it: docker.io/library/NAME for
// a bare name, docker.io/NAME for one with a path and no registry.
func fullName(name string) string {
	first, _, hasSlash := strings.Cut(name, "/")
	switch {
	case !hasSlash:
		return "docker.io/library/" + name
	case strings.ContainsAny(first, ".:") || first == "localhost":
		return name
	default:
		return "docker.io/" + name
	}
}
