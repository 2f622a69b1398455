package cluster

import (
	"archive/tar"
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The images `make images` writes without Docker must have the layout the
// Dockerfile's targets give users who build with a Docker engine: the same
// user, working directory, entrypoint and command, the binaries at the same
// paths, and the same Debian packages installed. The Dockerfile is read as
// the source of truth, so a change to one side that the other lacks fails
// here.
func TestImages_haveTheLayoutOfTheDockerfileTargets(t *testing.T) {
	dir := os.Getenv("IMAGES_DIR")
	if dir == "" {
		t.Fatal("run through `make e2e-cluster`: IMAGES_DIR must name the archives of `make images`")
	}
	stages := parseDockerfile(t, filepath.Join("..", "..", "Dockerfile"))
	for _, target := range []string{"manager", "runner-ansible", "runner-terraform", "runner-bash"} {
		t.Run(target, func(t *testing.T) {
			want := stages.resolve(t, target)
			img := readArchive(t, filepath.Join(dir, target+".tar"), append(slices.Clone(want.copies), "etc/passwd", "var/lib/dpkg/status"))

			if img.config.User != want.user {
				t.Errorf("user %q, the Dockerfile says %q", img.config.User, want.user)
			}
			if workdir := orDefault(img.config.WorkingDir, "/"); workdir != orDefault(want.workdir, "/") {
				t.Errorf("working directory %q, the Dockerfile says %q", workdir, want.workdir)
			}
			if !slices.Equal(img.config.Entrypoint, want.entrypoint) || !slices.Equal(img.config.Cmd, want.cmd) {
				t.Errorf("entrypoint %q cmd %q, the Dockerfile says %q %q", img.config.Entrypoint, img.config.Cmd, want.entrypoint, want.cmd)
			}
			for _, path := range want.copies {
				if mode, ok := img.files[path]; !ok || mode&0o111 == 0 {
					t.Errorf("/%s is not an executable file in the image (mode %o, present %v)", path, mode, ok)
				}
			}
			installed := dpkgInstalled(string(img.contents["var/lib/dpkg/status"]))
			for _, pkg := range want.packages {
				if !installed[pkg] {
					t.Errorf("Debian package %s is not installed", pkg)
				}
			}
			t.Logf("user %s, workdir %s, entrypoint %q cmd %q; executables %q; %d packages checked of %d installed; users %q",
				want.user, orDefault(want.workdir, "/"), want.entrypoint, want.cmd, want.copies, len(want.packages), len(installed), want.users)
			for _, uid := range want.users {
				if !regexp.MustCompile(`(?m)^[^:]+:[^:]*:` + uid + `:`).Match(img.contents["etc/passwd"]) {
					t.Errorf("no user with uid %s in /etc/passwd:\n%s", uid, img.contents["etc/passwd"])
				}
			}
		})
	}
}

func orDefault(s, empty string) string {
	if s == "" {
		return empty
	}
	return s
}

// stage is what a Dockerfile stage gives its image.
type stage struct {
	from       string
	user       string
	workdir    string
	entrypoint []string
	cmd        []string
	copies     []string // destination paths, without the leading slash
	packages   []string // apt-get install arguments
	users      []string // uids made by useradd
}

type dockerfile map[string]*stage

var (
	fromLine   = regexp.MustCompile(`^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$`)
	copyLine   = regexp.MustCompile(`^COPY\s+(?:--from=\S+\s+)?\S+\s+(\S+)$`)
	aptInstall = regexp.MustCompile(`apt-get install -y --no-install-recommends ([a-z0-9.+\- ]+)`)
	useradd    = regexp.MustCompile(`useradd --uid (\d+)`)
)

// parseDockerfile reads the instructions this test compares; continuation
// lines are joined first.
func parseDockerfile(t *testing.T, path string) dockerfile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), "\\\n", " ")
	stages := dockerfile{}
	var cur *stage
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if m := fromLine.FindStringSubmatch(line); m != nil {
			cur = &stage{from: m[1]}
			if m[2] != "" {
				stages[m[2]] = cur
			}
			continue
		}
		if cur == nil {
			continue // ARGs before the first stage
		}
		word, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch word {
		case "USER":
			cur.user = rest
		case "WORKDIR":
			cur.workdir = rest
		case "ENTRYPOINT":
			cur.entrypoint = jsonList(t, rest)
		case "CMD":
			cur.cmd = jsonList(t, rest)
		case "COPY":
			if m := copyLine.FindStringSubmatch(line); m != nil {
				cur.copies = append(cur.copies, strings.TrimPrefix(m[1], "/"))
			}
		case "RUN":
			for _, m := range aptInstall.FindAllStringSubmatch(rest, -1) {
				cur.packages = append(cur.packages, strings.Fields(m[1])...)
			}
			for _, m := range useradd.FindAllStringSubmatch(rest, -1) {
				cur.users = append(cur.users, m[1])
			}
		}
	}
	return stages
}

// resolve merges a target with the stages it is built FROM, as docker does:
// the later stage's settings win, files and packages add up.
func (d dockerfile) resolve(t *testing.T, name string) stage {
	t.Helper()
	s, ok := d[name]
	if !ok {
		t.Fatalf("the Dockerfile has no target %s", name)
	}
	out := *s
	if _, ok := d[s.from]; ok {
		parent := d.resolve(t, s.from)
		out.user = orDefault(s.user, parent.user)
		out.workdir = orDefault(s.workdir, parent.workdir)
		if s.entrypoint == nil {
			out.entrypoint = parent.entrypoint
		}
		if s.cmd == nil {
			out.cmd = parent.cmd
		}
		out.copies = append(slices.Clone(parent.copies), s.copies...)
		out.packages = append(slices.Clone(parent.packages), s.packages...)
		out.users = append(slices.Clone(parent.users), s.users...)
	}
	return out
}

func jsonList(t *testing.T, s string) []string {
	t.Helper()
	var list []string
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		t.Fatalf("%q is not an exec-form list: %v", s, err)
	}
	return list
}

// image is what the test reads back from an OCI archive.
type image struct {
	config struct {
		User       string   `json:"User"`
		WorkingDir string   `json:"WorkingDir"`
		Entrypoint []string `json:"Entrypoint"`
		Cmd        []string `json:"Cmd"`
	}
	files    map[string]int64  // path in the layer → mode, for wanted paths
	contents map[string][]byte // contents of wanted small files
}

// readArchive reads the archive's config and, from its single layer, the
// modes of the wanted paths and the contents of the small ones.
func readArchive(t *testing.T, path string, wanted []string) image {
	t.Helper()
	blobs := map[string][]byte{}
	walk(t, path, func(h *tar.Header, r io.Reader) {
		if h.Size < 1<<20 { // the JSON documents; layers are larger
			data, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			blobs[h.Name] = data
		}
	})
	var index, manifest struct {
		Manifests []struct{ Digest string } `json:"manifests"`
		Config    struct{ Digest string }   `json:"config"`
		Layers    []struct{ Digest string } `json:"layers"`
	}
	blob := func(digest string) []byte { return blobs["blobs/sha256/"+strings.TrimPrefix(digest, "sha256:")] }
	var img struct {
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(blobs["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("%s: index.json: %v (%d manifests)", path, err, len(index.Manifests))
	}
	if err := json.Unmarshal(blob(index.Manifests[0].Digest), &manifest); err != nil || len(manifest.Layers) != 1 {
		t.Fatalf("%s: manifest: %v (%d layers)", path, err, len(manifest.Layers))
	}
	var out image
	if err := json.Unmarshal(blob(manifest.Config.Digest), &img); err != nil {
		t.Fatalf("%s: config: %v", path, err)
	}
	if err := json.Unmarshal(img.Config, &out.config); err != nil {
		t.Fatalf("%s: config: %v", path, err)
	}

	out.files, out.contents = map[string]int64{}, map[string][]byte{}
	layer := "blobs/sha256/" + strings.TrimPrefix(manifest.Layers[0].Digest, "sha256:")
	walk(t, path, func(h *tar.Header, r io.Reader) {
		if h.Name != layer {
			return
		}
		walkTar(t, path+": layer", r, func(h *tar.Header, r io.Reader) {
			entry := strings.TrimPrefix(strings.TrimPrefix(h.Name, "./"), "/")
			if !slices.Contains(wanted, entry) {
				return
			}
			out.files[entry] = h.Mode
			if h.Size < 8<<20 {
				data, err := io.ReadAll(r)
				if err != nil {
					t.Fatal(err)
				}
				out.contents[entry] = data
			}
		})
	})
	return out
}

// walk calls fn for each regular file of the tar archive at path.
func walk(t *testing.T, path string, fn func(h *tar.Header, r io.Reader)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	walkTar(t, path, bufio.NewReaderSize(f, 1<<20), fn)
}

// walkTar calls fn for each regular file of the tar stream r (what names
// it in errors).
func walkTar(t *testing.T, what string, r io.Reader, fn func(h *tar.Header, r io.Reader)) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if h.Typeflag == tar.TypeReg {
			fn(h, tr)
		}
	}
}

// dpkgInstalled reads dpkg's status file: the packages installed.
func dpkgInstalled(status string) map[string]bool {
	installed := map[string]bool{}
	for _, para := range strings.Split(status, "\n\n") {
		var name string
		ok := false
		for _, line := range strings.Split(para, "\n") {
			if v, found := strings.CutPrefix(line, "Package: "); found {
				name = v
			}
			if line == "Status: install ok installed" {
				ok = true
			}
		}
		if name != "" && ok {
			installed[name] = true
		}
	}
	return installed
}
