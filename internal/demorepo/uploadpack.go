package demorepo

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The wire format, from git's Documentation/gitprotocol-pack.txt and
// gitprotocol-common.txt:
//
//	client: git-upload-pack /demo.git\0host=example.com:9418\0[\0version=2\0]
//	server: <commit> HEAD\0<capabilities>\n
//	        <commit> refs/heads/main\n
//	        0000
//	client: want <commit> <capabilities>\n ... 0000
//	        [have <id>\n ... 0000 ...] done\n
//	server: NAK\n (or ACK <id>\n), then the packfile, raw
//
// Each line is a pkt-line: four hex digits giving the length of the line
// including themselves, then the line; "0000" is a flush. Only the
// capabilities advertised may be used by the client, and none of those
// advertised here changes the exchange: no side-band (the pack follows
// the NAK as it is), no multi_ack, no shallow clones, no filters.

// maxLine bounds a line the server reads. git's own limit is 65516 bytes;
// the longest line a client sends here is its request line with the host.
const maxLine = 1024

// capabilities tell the client which branch HEAD is, so a clone without
// --branch checks main out.
const capabilities = "symref=HEAD:" + refMainName + " agent=bastion-demo"

// refusal is an error the client is told about in an ERR line, which git
// prints as "fatal: remote error: <message>".
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refusef(format string, args ...any) error {
	return &refusal{msg: fmt.Sprintf(format, args...)}
}

// conversation is one client's request and the answer to it.
type conversation struct {
	repo *Repository
	r    *pktReader
	w    *bufio.Writer
}

func (c *conversation) run() error {
	line, flush, err := c.r.read()
	if err != nil {
		return err
	}
	if flush {
		return refusef("not a git request: expected \"git-upload-pack %s\"", Path)
	}
	service, path, err := parseRequest(line)
	if err != nil {
		return err
	}
	if service != "git-upload-pack" {
		return refusef("%s is not served: the demo repository can only be cloned and fetched", service)
	}
	if path != Path {
		return refusef("no repository at %q: this server has only %s", path, Path)
	}
	if err := c.advertise(); err != nil {
		return err
	}
	wanted, err := c.readWants()
	if err != nil || !wanted {
		return err // no wants: the client has what it needs (or ls-remote)
	}
	if err := c.negotiate(); err != nil {
		return err
	}
	if _, err := c.w.Write(c.repo.pack); err != nil {
		return err
	}
	return c.w.Flush()
}

// parseRequest reads git-daemon's request line. Extra parameters after
// the host (a client's "version=2") are ignored: answering with a version
// 0 advertisement makes the client fall back, as with any older server.
func parseRequest(line string) (service, path string, err error) {
	command, _, _ := strings.Cut(line, "\x00")
	command = strings.TrimSuffix(command, "\n")
	service, path, ok := strings.Cut(command, " ")
	if !ok || service == "" || path == "" {
		return "", "", refusef("not a git request: expected \"git-upload-pack %s\"", Path)
	}
	return service, path, nil
}

// advertise lists HEAD and main, both at the one commit.
func (c *conversation) advertise() error {
	writePkt(c.w, c.repo.Commit+" HEAD\x00"+capabilities+"\n")
	writePkt(c.w, c.repo.Commit+" "+refMainName+"\n")
	writeFlush(c.w)
	return c.w.Flush()
}

// readWants reads want lines up to a flush and reports whether there was
// any. Every want must be the advertised commit.
func (c *conversation) readWants() (bool, error) {
	wanted := false
	for {
		line, flush, err := c.r.read()
		switch {
		case errors.Is(err, io.EOF) && !wanted:
			return false, nil // a client that only listed the refs
		case err != nil:
			return false, err
		case flush:
			return wanted, nil
		}
		id, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "want ")
		if !ok {
			return false, refusef("expected \"want <commit>\", got %q (shallow clones and filters are not supported)", firstWord(line))
		}
		id, _, _ = strings.Cut(id, " ") // the first want carries the client's capabilities
		if id != c.repo.Commit {
			return false, refusef("upload-pack: not our ref %.40s", id)
		}
		wanted = true
	}
}

// negotiate answers the client's haves until it says done, as upload-pack
// does without multi_ack: ACK the first common commit, NAK each flush
// while there is none, NAK after done if there never was.
func (c *conversation) negotiate() error {
	common := false
	for {
		line, flush, err := c.r.read()
		if err != nil {
			return err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case flush:
			if !common {
				writePkt(c.w, "NAK\n")
			}
		case line == "done":
			if !common {
				writePkt(c.w, "NAK\n")
			}
			return nil
		case strings.HasPrefix(line, "have "):
			if id := strings.TrimPrefix(line, "have "); !common && id == c.repo.Commit {
				writePkt(c.w, "ACK "+id+"\n")
				common = true
			}
		default:
			return refusef("expected \"have <commit>\" or \"done\", got %q", firstWord(line))
		}
		if err := c.w.Flush(); err != nil {
			return err
		}
	}
}

// firstWord is the start of a line the server did not expect, for a
// message that must not echo much of what a client sent.
func firstWord(line string) string {
	word, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	if len(word) > 20 {
		word = word[:20] + "…"
	}
	return word
}

// pktReader reads pkt-lines.
type pktReader struct {
	r      io.Reader
	header [4]byte
}

// read returns the next line, or flush=true for a flush-pkt.
func (p *pktReader) read() (line string, flush bool, err error) {
	if _, err := io.ReadFull(p.r, p.header[:]); err != nil {
		return "", false, err
	}
	n, err := strconv.ParseUint(string(p.header[:]), 16, 16)
	switch {
	case err != nil:
		return "", false, refusef("not a git request: a line must start with four hex digits giving its length")
	case n == 0:
		return "", true, nil
	case n < 4:
		// 0001 (delim) and 0002 (response end) exist only in version 2.
		return "", false, refusef("unexpected packet %04x: this server speaks protocol version 0", n)
	case n-4 > maxLine:
		return "", false, refusef("a line of %d bytes is longer than the %d this server reads", n-4, maxLine)
	}
	buf := make([]byte, n-4)
	if _, err := io.ReadFull(p.r, buf); err != nil {
		return "", false, err
	}
	return string(buf), false, nil
}

// writePkt and writeFlush write to a bufio.Writer, whose Flush reports
// any error.
func writePkt(w *bufio.Writer, line string) { fmt.Fprintf(w, "%04x%s", len(line)+4, line) }

func writeFlush(w *bufio.Writer) { w.WriteString("0000") }

// writeErr tells the client why it is refused.
func writeErr(w io.Writer, msg string) error {
	line := "ERR " + msg + "\n"
	_, err := fmt.Fprintf(w, "%04x%s", len(line)+4, line)
	return err
}
