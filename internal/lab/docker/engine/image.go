package engine

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// ImageRepo names cnperf's workload image; its tag is the first 12 hex
// digits of the binary's SHA-256, so an engine holding that tag holds this
// very binary.
const ImageRepo = "cnperf/workload"

// ImageRef returns the workload image reference for the binary at exe.
func ImageRef(exe string) (string, error) {
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", exe, err)
	}
	return ImageRepo + ":" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// ImportImage makes the workload image on an engine unless it has it: a
// FROM scratch image holding only the static cnperf binary as /cnperf, its
// entry point, built offline as `docker import` builds one from a tar
// stream. No registry is involved. It returns the image reference.
func ImportImage(ctx context.Context, cli *client.Client, exe string) (string, error) {
	ref, err := ImageRef(exe)
	if err != nil {
		return "", err
	}
	if _, err := cli.ImageInspect(ctx, ref); err == nil {
		return ref, nil
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := tw.WriteHeader(&tar.Header{Name: "cnperf", Mode: 0o755, Size: st.Size(), ModTime: st.ModTime(), Typeflag: tar.TypeReg})
		if err == nil {
			_, err = io.Copy(tw, f)
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	rc, err := cli.ImageImport(ctx, image.ImportSource{Source: pr, SourceName: "-"}, ref, image.ImportOptions{
		Changes: []string{`ENTRYPOINT ["/cnperf"]`, "LABEL " + LabLabel + "-image=workload"},
	})
	if err != nil {
		pr.CloseWithError(err)
		return "", fmt.Errorf("import the workload image: %w", err)
	}
	defer rc.Close()
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return "", fmt.Errorf("import the workload image: %w", err)
	}
	if _, err := cli.ImageInspect(ctx, ref); err != nil {
		return "", fmt.Errorf("workload image %s missing after import: %w", ref, err)
	}
	return ref, nil
}
