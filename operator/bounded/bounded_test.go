package bounded

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// counting is an endless (or n bytes long) reader that counts what it gave (its bytes are
// whatever p held: only their number matters).
type counting struct {
	n, read int64 // n < 0: endless
}

func (c *counting) Read(p []byte) (int, error) {
	if c.n >= 0 && c.read >= c.n {
		return 0, io.EOF
	}
	k := int64(len(p))
	if c.n >= 0 {
		k = min(k, c.n-c.read)
	}
	c.read += k
	return int(k), nil
}

// TestStdinLimit: 100 MiB on standard input is refused naming it and the limit, having read
// at most MaxFile+1 bytes; exactly MaxFile is read whole.
func TestStdinLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int64
		wantErr bool
	}{
		{"100 MiB", 100 << 20, true},
		{"endless", -1, true},
		{"one byte past the limit", MaxFile + 1, true},
		{"at the limit", MaxFile, false},
		{"empty", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &counting{n: tc.n}
			data, err := ReadStdin(in)
			if in.read > MaxFile+1 {
				t.Errorf("read %d bytes, want at most %d", in.read, MaxFile+1)
			}
			if !tc.wantErr {
				if err != nil || int64(len(data)) != tc.n {
					t.Fatalf("got %d bytes, %v; want %d", len(data), err, tc.n)
				}
				return
			}
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err = %v, want ErrTooLarge", err)
			}
			for _, want := range []string{"standard input", "4 MiB"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not name %q", err, want)
				}
			}
		})
	}
}

// TestFileLimit: a sparse 100 MiB file is refused naming it and the limit; a small one reads
// whole; a missing one is the os error.
func TestFileLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil { // sparse: no 100 MiB written to disk
		t.Fatal(err)
	}
	f.Close()
	_, err = ReadFile(big)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), big) || !strings.Contains(err.Error(), "4 MiB") {
		t.Errorf("ReadFile(100 MiB) = %v, want ErrTooLarge naming %s and 4 MiB", err, big)
	}
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("kind: IstioOperator\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(small); err != nil || string(data) != "kind: IstioOperator\n" {
		t.Errorf("ReadFile(small) = %q, %v", data, err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v, want ErrNotExist", err)
	}
}

// TestReadSizes: whatever the size around the chunk boundaries, read returns the input as
// it was, and refuses one byte past the limit.
func TestReadSizes(t *testing.T) {
	for _, n := range []int64{1, 4095, 4096, 4097, 12288, 12289, 1 << 20} {
		src := bytes.Repeat([]byte("0123456789"), int(n/10+1))[:n]
		got, err := read(bytes.NewReader(src), "x", n, 0)
		if err != nil || !bytes.Equal(got, src) {
			t.Errorf("read(%d bytes, limit %d): %d bytes, %v", n, n, len(got), err)
		}
		if _, err := read(bytes.NewReader(src), "x", n-1, 0); !errors.Is(err, ErrTooLarge) {
			t.Errorf("read(%d bytes, limit %d): %v, want ErrTooLarge", n, n-1, err)
		}
	}
}

// TestGunzipLimit: a payload that unzips past MaxUnzipped is refused naming it and the limit
// having allocated less than twice the limit; one within it unzips; a truncated one fails.
func TestGunzipLimit(t *testing.T) {
	bomb := fixture.Gzipped(t, nil, 0, MaxUnzipped+1)
	var err error
	alloc := fixture.Allocated(func() { _, err = Gunzip(bomb, "Secret/ns/name") })
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "Secret/ns/name") || !strings.Contains(err.Error(), "64 MiB") {
		t.Errorf("Gunzip(bomb) = %v, want ErrTooLarge naming the object and 64 MiB", err)
	}
	if alloc >= 2*MaxUnzipped {
		t.Errorf("allocated %d bytes refusing it, want under %d", alloc, 2*MaxUnzipped)
	} else {
		t.Logf("%d KiB compressed refused having allocated %.1f MiB (limit %d MiB)", len(bomb)>>10, float64(alloc)/(1<<20), MaxUnzipped>>20)
	}

	want := []byte(strings.Repeat("release ", 1000))
	z := fixture.Gzipped(t, want, 0, 0)
	if got, err := Gunzip(z, "x"); err != nil || !bytes.Equal(got, want) {
		t.Errorf("Gunzip(small) = %d bytes, %v", len(got), err)
	}
	if _, err := Gunzip(z[:len(z)/2], "Secret/ns/cut"); err == nil || errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "Secret/ns/cut does not unzip") {
		t.Errorf("Gunzip(truncated) = %v, want a does-not-unzip error", err)
	}
}
