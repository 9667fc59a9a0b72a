package render

import (
	"encoding/json"
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
	"github.com/istioctl-installer/istioctl/operator/bounded"

	"github.com/istioctl-installer/istioctl/operator/render/internal/fastyaml"
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
	// The embedded charts' values.yaml is read by fastyaml.Parse, not by the loader: the loader
	// reads it through sigs.k8s.io/yaml (YAML to JSON to a map), about 20 times its size in
	// garbage for the istiod chart, every run. Any other chart directory is read as Helm
	// reads it; TestEmbeddedValuesAsHelm proves the two agree on every embedded chart.
	var values map[string]any
	var valuesFile *loader.BufferedFile
	if c.inPlace != nil {
		files, valuesFile, values = takeValues(files)
	}
	ch, plain := (*chart.Chart)(nil), false
	if c.inPlace != nil {
		ch, plain = loadPlain(files)
	}
	if !plain {
		if ch, err = loader.LoadFiles(files); err != nil {
			return nil, fmt.Errorf("loading chart %s from %s: %w", path.Clean(dir), c.origin, err)
		}
	}
	if valuesFile != nil {
		ch.Values = values
		ch.Raw = append(ch.Raw, &chart.File{Name: valuesFile.Name, Data: valuesFile.Data})
	}
	return ch, nil
}

// takeValues removes values.yaml from files and returns it read as Helm's loader reads it,
// when fastyaml.Parse can read it; otherwise files unchanged and a nil file.
func takeValues(files []*loader.BufferedFile) ([]*loader.BufferedFile, *loader.BufferedFile, map[string]any) {
	for i, f := range files {
		if f.Name != "values.yaml" {
			continue
		}
		docs, ok := fastyaml.Parse(unsafe.String(unsafe.SliceData(f.Data), len(f.Data)))
		if !ok || len(docs) > 1 {
			return files, nil, nil
		}
		values := map[string]any{}
		if len(docs) == 1 && docs[0] != nil {
			m, ok := docs[0].(map[string]any)
			if !ok {
				return files, nil, nil
			}
			values = asJSONNumbers(m).(map[string]any)
		}
		rest := append(files[:i:i], files[i+1:]...)
		return rest, f, values
	}
	return files, nil, nil
}

// loadPlain builds the chart loader.LoadFiles builds from the files of a chart without
// subcharts, locks or requirements, its Chart.yaml read by fastyaml.Parse: the loader reads
// it through sigs.k8s.io/yaml, some 40 KB of garbage for a 300-byte file, every chart of
// every run. False when files hold anything else, or a Chart.yaml fastyaml.Parse cannot
// read or Helm would refuse: Helm's loader then reads them. TestEmbeddedChartsAsHelm proves
// the two agree on every embedded chart.
func loadPlain(files []*loader.BufferedFile) (*chart.Chart, bool) {
	c := &chart.Chart{}
	for _, f := range files {
		c.Raw = append(c.Raw, &chart.File{Name: f.Name, Data: f.Data})
		switch {
		case f.Name == "Chart.yaml":
			md, ok := readMetadata(f.Data)
			if !ok {
				return nil, false
			}
			c.Metadata = md
		case f.Name == "values.yaml" || f.Name == "Chart.lock" || f.Name == "requirements.yaml" ||
			f.Name == "requirements.lock" || strings.HasPrefix(f.Name, "charts/"):
			return nil, false
		case f.Name == "values.schema.json":
			c.Schema = f.Data
		case strings.HasPrefix(f.Name, "templates/"):
			c.Templates = append(c.Templates, &chart.File{Name: f.Name, Data: f.Data})
		default:
			c.Files = append(c.Files, &chart.File{Name: f.Name, Data: f.Data})
		}
	}
	if c.Metadata == nil || c.Validate() != nil {
		return nil, false
	}
	return c, true
}

// readMetadata reads a Chart.yaml as the loader does (YAML to JSON, JSON into the struct),
// the YAML read by fastyaml.Parse.
func readMetadata(data []byte) (*chart.Metadata, bool) {
	docs, ok := fastyaml.Parse(unsafe.String(unsafe.SliceData(data), len(data)))
	if !ok || len(docs) != 1 {
		return nil, false
	}
	j, err := json.Marshal(docs[0])
	if err != nil {
		return nil, false
	}
	md := &chart.Metadata{}
	if err := json.Unmarshal(j, md); err != nil {
		return nil, false
	}
	if md.APIVersion == "" {
		md.APIVersion = chart.APIVersionV1 // as the loader: a Chart.yaml without one is v1
	}
	return md, true
}

// asJSONNumbers turns the integers fastyaml.Parse reads into float64, as decoding JSON does:
// Helm's loader reads values.yaml through JSON, and templates compare and print what it
// gives (an int64 and a float64 1 are not eq in a template).
func asJSONNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = asJSONNumbers(x)
		}
	case []any:
		for i, x := range t {
			t[i] = asJSONNumbers(x)
		}
	case int64:
		return float64(t)
	}
	return v
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
		} else if data, err = bounded.ReadFS(c.fsys, p); err != nil {
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
