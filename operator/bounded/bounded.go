package bounded

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxFile bounds one input file (-f, a fleet file, a profile file, a cacerts file, a chart
// file of --manifests) and standard input. Real inputs are kilobytes (the largest chart file,
// the Base CRDs, under 1 MiB), and what ends up in the cluster fits etcd's 1.5 MiB request
// limit. The YAML parser holds about 100 bytes per byte of a dense file before the node
// budget can count (a 4 MiB flow list: 390 MiB in use), so the limit is low: 4 MiB is also
// about what v1alpha1.MaxNodes nodes take written densely.
const MaxFile = 4 << 20

// MaxUnzipped bounds a payload decompressed from the cluster (a Helm release record, an
// install record). Each comes from an object of at most about 1 MiB (etcd's limit), which
// gzip can inflate a thousandfold; the records Helm and istioctl write inflate tenfold at
// most, so 64 MiB refuses only what neither wrote.
const MaxUnzipped = 64 << 20

// Stdin names standard input in errors.
const Stdin = "standard input"

// ErrTooLarge is matched (errors.Is) by every TooLargeError.
var ErrTooLarge = errors.New("input too large")

// TooLargeError is an input refused for its size.
type TooLargeError struct {
	// What names the input: a file's path, Stdin, or what was decompressed.
	What string
	// Limit is the limit in bytes.
	Limit int64
	// Unzipped says the limit was on the decompressed size.
	Unzipped bool
}

func (e *TooLargeError) Error() string {
	if e.Unzipped {
		return fmt.Sprintf("%s unzips to more than %s, the limit istioctl reads of one payload from the cluster; Helm and istioctl write far smaller ones: check who wrote it", e.What, size(e.Limit))
	}
	return fmt.Sprintf("%s is larger than %s, the limit istioctl reads of one input; specs and fleet files are kilobytes: check it is the input you meant", e.What, size(e.Limit))
}

// Is makes errors.Is(err, ErrTooLarge) hold.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads the file at path, refusing one larger than MaxFile.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readFile(f, path)
}

// ReadFS reads the file name of fsys (a --manifests directory's charts and profiles),
// refusing one larger than MaxFile.
func ReadFS(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readFile(f, name)
}

// readFile reads an open file: one whose size says it is over the limit is refused unread;
// the size sizes the first read (a file can grow, or report no size: /dev/stdin, a pipe).
func readFile(f fs.File, name string) ([]byte, error) {
	var hint int64
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if st.Size() > MaxFile {
			return nil, &TooLargeError{What: name, Limit: MaxFile}
		}
		hint = st.Size() + 1 // the read that finds the end
	}
	return read(f, name, MaxFile, hint)
}

// ReadStdin reads r, standard input, refusing more than MaxFile.
func ReadStdin(r io.Reader) ([]byte, error) {
	return read(r, Stdin, MaxFile, 0)
}

// Gunzip decompresses data, refusing more than MaxUnzipped; what names the payload.
func Gunzip(data []byte, what string) ([]byte, error) {
	return gunzip(data, what, MaxUnzipped)
}

func gunzip(data []byte, what string, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s does not unzip: %w", what, err)
	}
	out, err := read(zr, what, limit, 0)
	var tl *TooLargeError
	if errors.As(err, &tl) {
		tl.Unzipped = true
		return nil, tl
	}
	if err != nil {
		return nil, fmt.Errorf("%s does not unzip: %w", what, err)
	}
	return out, nil
}

// read reads r to its end, reading at most limit+1 bytes and holding no more: chunks of
// growing size (the first of size hint, when known), each no larger than what is left of
// the limit, joined once the end is reached within it (io.ReadAll's growth would hold up to
// twice the limit before refusing).
func read(r io.Reader, what string, limit, hint int64) ([]byte, error) {
	var chunks [][]byte
	var total int64
	next := int64(4 << 10)
	if hint > 0 {
		next = hint
	}
	for {
		buf := make([]byte, min(next, limit+1-total))
		n, err := fill(r, buf)
		total += int64(n)
		if total > limit {
			return nil, &TooLargeError{What: what, Limit: limit}
		}
		chunks = append(chunks, buf[:n])
		switch {
		case errors.Is(err, io.EOF):
			if len(chunks) == 1 {
				return chunks[0], nil
			}
			return bytes.Join(chunks, nil), nil
		case err != nil:
			return nil, err
		}
		next = min(next*2, 8<<20)
	}
}

// fill reads into buf until it is full or r fails; unlike io.ReadFull it returns io.EOF as
// it is, so a truncated gzip stream's io.ErrUnexpectedEOF stays an error.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
