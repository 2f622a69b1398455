// Package demorepo is the demo project's git repository, built into the
// binary and served by the manager over the git:// protocol, so that a
// demo project runs its tasks without the internet, under `bastion dev`
// and in a cluster alike.
//
// The repository is made in memory from the files embedded under files/:
// one commit on the branch main, with a fixed author and date, so that the
// same files always give the same commit hash, on every replica and every
// start. Its objects are computed here in pure Go (blob, tree and commit
// objects, SHA-1, zlib) and packed once; the server hands the same bytes to
// every client.
package demorepo

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"path"
	"sort"
	"strings"
)

const (
	// Path is the one repository path the server answers.
	Path = "/demo.git"
	// Branch is the repository's only branch.
	Branch = "main"
	// DefaultPort is git's own port, where `bastion manager` serves the
	// repository unless told otherwise.
	DefaultPort = 9418
)

// The commit's identity and date are fixed: they are part of the commit
// hash, which must not change from one start to the next.
const (
	author      = "Bastion <demo@bastion.dev>"
	commitTime  = 1735689600 // 2025-01-01T00:00:00Z
	commitMsg   = "Bastion demo project\n"
	refMainName = "refs/heads/" + Branch
)

//go:embed files
var embedded embed.FS

// Files are the repository's files, as its work tree holds them.
func Files() fs.FS {
	sub, err := fs.Sub(embedded, "files")
	if err != nil {
		panic(err) // the directory is embedded; this cannot fail
	}
	return sub
}

// URL is the repository's address on host (a name or an IP, without a
// port) and port: git://host:port/demo.git.
func URL(host string, port int) string {
	return (&url.URL{Scheme: "git", Host: net.JoinHostPort(host, fmt.Sprint(port)), Path: Path}).String()
}

// Repository is the built repository: its commit and the packfile that
// holds every one of its objects.
type Repository struct {
	// Commit is the hex SHA-1 of the commit that HEAD and main point at.
	Commit string
	pack   []byte
}

// Build makes the repository from the embedded files.
func Build() (*Repository, error) { return build(Files()) }

// object is a git object: its type and content, without the header.
type object struct {
	kind objectKind
	data []byte
}

// objectKind is a packfile's object type number.
type objectKind byte

const (
	kindCommit objectKind = 1
	kindTree   objectKind = 2
	kindBlob   objectKind = 3
)

var kindNames = map[objectKind]string{kindCommit: "commit", kindTree: "tree", kindBlob: "blob"}

// id is the object's SHA-1 over "<type> <size>\x00<content>", as git
// names it.
func (o object) id() [sha1.Size]byte {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kindNames[o.kind], len(o.data))
	h.Write(o.data)
	var sum [sha1.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// build makes one blob per file, one tree per directory and one commit.
func build(files fs.FS) (*Repository, error) {
	var objects []object
	root, err := addTree(files, ".", &objects)
	if err != nil {
		return nil, err
	}
	commit := object{kind: kindCommit, data: fmt.Appendf(nil,
		"tree %x\nauthor %s %d +0000\ncommitter %s %d +0000\n\n%s",
		root, author, commitTime, author, commitTime, commitMsg)}
	objects = append(objects, commit)
	pack, err := packObjects(objects)
	if err != nil {
		return nil, err
	}
	id := commit.id()
	return &Repository{Commit: hex.EncodeToString(id[:]), pack: pack}, nil
}

// treeEntry is one line of a tree object.
type treeEntry struct {
	mode string
	name string
	id   [sha1.Size]byte
}

// addTree adds the objects of directory dir (blobs, subtrees, then the
// tree itself) and returns the tree's id.
func addTree(files fs.FS, dir string, objects *[]object) ([sha1.Size]byte, error) {
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return [sha1.Size]byte{}, err
	}
	var tree []treeEntry
	for _, e := range entries {
		name := path.Join(dir, e.Name())
		if e.IsDir() {
			id, err := addTree(files, name, objects)
			if err != nil {
				return id, err
			}
			tree = append(tree, treeEntry{mode: "40000", name: e.Name(), id: id})
			continue
		}
		data, err := fs.ReadFile(files, name)
		if err != nil {
			return [sha1.Size]byte{}, err
		}
		blob := object{kind: kindBlob, data: data}
		*objects = append(*objects, blob)
		tree = append(tree, treeEntry{mode: fileMode(e.Name()), name: e.Name(), id: blob.id()})
	}
	// Git sorts a tree's entries by name, a directory's name as if it
	// ended in "/"; fsck refuses a tree in any other order.
	sortKey := func(e treeEntry) string {
		if e.mode == "40000" {
			return e.name + "/"
		}
		return e.name
	}
	sort.Slice(tree, func(i, j int) bool { return sortKey(tree[i]) < sortKey(tree[j]) })
	var data bytes.Buffer
	for _, e := range tree {
		fmt.Fprintf(&data, "%s %s\x00", e.mode, e.name)
		data.Write(e.id[:])
	}
	obj := object{kind: kindTree, data: data.Bytes()}
	*objects = append(*objects, obj)
	return obj.id(), nil
}

// fileMode: scripts are executable, so that a clone can run them directly.
func fileMode(name string) string {
	if strings.HasSuffix(name, ".sh") {
		return "100755"
	}
	return "100644"
}

// packObjects writes a version 2 packfile holding objects whole (no
// deltas: the repository is a few kilobytes), then the SHA-1 of all of it.
func packObjects(objects []object) ([]byte, error) {
	var pack bytes.Buffer
	pack.WriteString("PACK")
	_ = binary.Write(&pack, binary.BigEndian, uint32(2))
	_ = binary.Write(&pack, binary.BigEndian, uint32(len(objects)))
	for _, o := range objects {
		pack.Write(objectHeader(o.kind, len(o.data)))
		z := zlib.NewWriter(&pack)
		if _, err := z.Write(o.data); err != nil {
			return nil, err
		}
		if err := z.Close(); err != nil {
			return nil, err
		}
	}
	sum := sha1.Sum(pack.Bytes())
	pack.Write(sum[:])
	return pack.Bytes(), nil
}

// objectHeader is an object's type and size in a packfile: the type in
// bits 4-6 of the first byte with the size's low 4 bits, then 7 bits of
// size per byte, the high bit saying that another byte follows.
func objectHeader(kind objectKind, size int) []byte {
	b := byte(kind)<<4 | byte(size&0x0f)
	size >>= 4
	var out []byte
	for size > 0 {
		out = append(out, b|0x80)
		b = byte(size & 0x7f)
		size >>= 7
	}
	return append(out, b)
}
