package render

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/istioctl-installer/istioctl/manifests"
)

// Charts loads charts from the embedded set or a --manifests directory, once each.
type Charts struct {
	fsys   fs.FS
	origin string
	// inPlace gives a file (path relative to fsys) as the binary's own bytes, for the
	// chart loader to read without a copy (the embedded charts only).
	inPlace func(string) (string, bool)
	mu      sync.Mutex
	cache   map[string]*loaded
}

// loaded is one chart directory's load, done once; instances of different charts load
// theirs at the same time (Render runs them in parallel).
type loaded struct {
	once  sync.Once
	chart *chart.Chart
	err   error
}

// NewCharts returns the embedded charts when manifestsDir is empty, else <dir>/charts.
func NewCharts(manifestsDir string) (*Charts, error) {
	if manifestsDir == "" {
		sub, err := fs.Sub(manifests.Charts, "charts")
		if err != nil {
			return nil, err
		}
		// Read in place, the files a render loads (300 KB for the default profile's, 480 KB
		// more of CRDs) are not a copy on the heap for the whole render. Nothing writes into
		// a chart file's bytes (a write would fault: they are read-only).
		inPlace := func(p string) (string, bool) { return manifests.InPlace("charts/" + p) }
		return &Charts{fsys: sub, origin: "built-in charts", inPlace: inPlace, cache: map[string]*loaded{}}, nil
	}
	dir := filepath.Join(manifestsDir, "charts")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--manifests %s: no charts directory at %s", manifestsDir, dir)
	}
	return &Charts{fsys: os.DirFS(dir), origin: dir, cache: map[string]*loaded{}}, nil
}

// Load returns the chart in directory dir (e.g. "istio-control/istio-discovery").
func (c *Charts) Load(dir string) (*chart.Chart, error) {
	c.mu.Lock()
	l, ok := c.cache[dir]
	if !ok {
		l = &loaded{}
		c.cache[dir] = l
	}
	c.mu.Unlock()
	l.once.Do(func() { l.chart, l.err = c.load(dir) })
	return l.chart, l.err
}

func (c *Charts) load(dir string) (*chart.Chart, error) {
	files, err := c.Files(dir)
	if err != nil {
		return nil, err
	}
	ch, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s from %s: %w", path.Clean(dir), c.origin, err)
	}
	return ch, nil
}

// Files are the files of the chart in directory dir, named relative to it: what Load
// reads, and what a copy of the chart holds.
func (c *Charts) Files(dir string) ([]*loader.BufferedFile, error) {
	var files []*loader.BufferedFile
	err := fs.WalkDir(c.fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		var data []byte
		if s, ok := c.readInPlace(p); ok {
			data = unsafe.Slice(unsafe.StringData(s), len(s))
		} else if data, err = fs.ReadFile(c.fsys, p); err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: strings.TrimPrefix(p, dir+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading chart %s from %s: %w", dir, c.origin, err)
	}
	return files, nil
}

func (c *Charts) readInPlace(p string) (string, bool) {
	if c.inPlace == nil {
		return "", false
	}
	return c.inPlace(p)
}

// Has says whether the chart directory exists.
func (c *Charts) Has(dir string) bool {
	_, err := fs.Stat(c.fsys, path.Join(dir, "Chart.yaml"))
	return err == nil
}
