// Command ociimage writes a directory as a single-layer OCI image archive,
// which `ctr images import` loads into containerd: no Docker engine and no
// registry needed. hack/images/build.sh assembles the root filesystems.
//
//	go run ./hack/ociimage -rootfs DIR -name ghcr.io/x/y:tag -o y.tar \
//	  -entrypoint /bastion -cmd manager -user 65532:65532 -workdir /
//
// The layer is an uncompressed tar of DIR with its owners, modes, symlinks
// and hard links kept; entries are sorted and their times fixed, so the same
// tree gives the same digest.
package main

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	var (
		rootfs     = flag.String("rootfs", "", "directory that becomes the image's filesystem")
		name       = flag.String("name", "", "fully qualified image name, e.g. ghcr.io/bastion-dev/bastion:1.0")
		out        = flag.String("o", "", "archive to write")
		user       = flag.String("user", "", "user[:group] the container runs as")
		workdir    = flag.String("workdir", "", "working directory")
		entrypoint stringList
		cmd        stringList
		env        stringList
	)
	flag.Var(&entrypoint, "entrypoint", "entrypoint element (repeat for each)")
	flag.Var(&cmd, "cmd", "cmd element (repeat for each)")
	flag.Var(&env, "env", "KEY=value (repeat for each)")
	flag.Parse()
	if *rootfs == "" || *name == "" || *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: ociimage -rootfs DIR -name NAME -o ARCHIVE [-entrypoint X]... [-cmd X]... [-env K=V]... [-user U] [-workdir D]")
		os.Exit(2)
	}
	if !strings.Contains(*name, "/") || !strings.Contains(*name, ":") {
		fatal(fmt.Errorf("image name %q must be fully qualified with a tag (registry/repository:tag): the kubelet normalises short names", *name))
	}
	if len(env) == 0 {
		env = stringList{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	img := image{rootfs: *rootfs, name: *name, user: *user, workdir: *workdir,
		entrypoint: entrypoint, cmd: cmd, env: env}
	if err := img.write(*out); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "ociimage:", err)
	os.Exit(1)
}

type image struct {
	rootfs, name, user, workdir string
	entrypoint, cmd, env        []string
}

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// write builds the archive in a temporary file next to out and renames it,
// so that an interrupted build leaves no half archive behind.
func (img image) write(out string) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".ociimage-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()

	// The layer first, into its own temporary file: its digest names it.
	layerFile, err := os.CreateTemp(filepath.Dir(out), ".layer-*")
	if err != nil {
		return err
	}
	defer os.Remove(layerFile.Name())
	defer layerFile.Close()
	h := sha256.New()
	size, err := writeLayer(io.MultiWriter(layerFile, h), img.rootfs)
	if err != nil {
		return fmt.Errorf("layer of %s: %w", img.rootfs, err)
	}
	layer := descriptor{MediaType: "application/vnd.oci.image.layer.v1.tar", Digest: digest(h), Size: size}

	config, err := json.Marshal(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"config": map[string]any{
			"User": img.user, "WorkingDir": img.workdir, "Env": img.env,
			"Entrypoint": img.entrypoint, "Cmd": img.cmd,
		},
		// Uncompressed layer: its diff id is its digest.
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{layer.Digest}},
		"history": []map[string]any{{"created_by": "hack/ociimage"}},
	})
	if err != nil {
		return err
	}
	configDesc := blobDescriptor("application/vnd.oci.image.config.v1+json", config)
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        configDesc,
		"layers":        []descriptor{layer},
	})
	if err != nil {
		return err
	}
	manifestDesc := blobDescriptor("application/vnd.oci.image.manifest.v1+json", manifest)
	tag := img.name[strings.LastIndex(img.name, ":")+1:]
	manifestDesc.Annotations = map[string]string{
		// containerd's importer names the image by this one...
		"io.containerd.image.name": img.name,
		// ...and the OCI layout by this one.
		"org.opencontainers.image.ref.name": tag,
	}
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.index.v1+json",
		"manifests":     []descriptor{manifestDesc},
	})
	if err != nil {
		return err
	}

	tw := tar.NewWriter(tmp)
	files := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{blobPath(configDesc.Digest), config},
		{blobPath(manifestDesc.Digest), manifest},
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Name: blobPath(layer.Digest), Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := layerFile.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.Copy(tw, layerFile); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}

func blobDescriptor(mediaType string, data []byte) descriptor {
	h := sha256.New()
	h.Write(data)
	return descriptor{MediaType: mediaType, Digest: digest(h), Size: int64(len(data))}
}

func digest(h hash.Hash) string { return "sha256:" + hex.EncodeToString(h.Sum(nil)) }

func blobPath(d string) string { return "blobs/sha256/" + strings.TrimPrefix(d, "sha256:") }

// countingWriter counts what passes through.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeLayer writes root as a tar stream and returns its size.
func writeLayer(w io.Writer, root string) (int64, error) {
	cw := &countingWriter{w: w}
	tw := tar.NewWriter(cw)
	var paths []string
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	sort.Strings(paths)
	epoch := time.Unix(0, 0)
	// Hard links: the first path of an inode carries the data, the others
	// link to it.
	seen := map[[2]uint64]string{}
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			return 0, err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(os.PathSeparator)))
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return 0, err
			}
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", p, err)
		}
		hdr.Name = rel
		if fi.IsDir() {
			hdr.Name += "/"
		}
		hdr.ModTime, hdr.AccessTime, hdr.ChangeTime = epoch, time.Time{}, time.Time{}
		hdr.Uname, hdr.Gname = "", ""
		hdr.Format = tar.FormatPAX
		st, ok := fi.Sys().(*syscall.Stat_t)
		if ok {
			hdr.Uid, hdr.Gid = int(st.Uid), int(st.Gid)
			if fi.Mode().IsRegular() && st.Nlink > 1 {
				key := [2]uint64{st.Dev, st.Ino}
				if first, dup := seen[key]; dup {
					hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, first, 0
				} else {
					seen[key] = rel
				}
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return 0, fmt.Errorf("%s: %w", p, err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if err := copyFile(tw, p); err != nil {
				return 0, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return 0, err
	}
	return cw.n, nil
}

func copyFile(w io.Writer, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	if err != nil {
		return errors.Join(fmt.Errorf("%s", p), err)
	}
	return nil
}
