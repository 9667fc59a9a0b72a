package printer

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Manifests writes rendered manifests (docs, named by component in names): to w when path
// is "", into the file path, or with dir one <name>.yaml each into the directory path.
// Each doc writes itself (render.Text): a render is most of a MiB, never copied whole.
func Manifests(w io.Writer, path string, dir bool, names []string, docs []io.WriterTo) error {
	if dir {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return err
		}
		for i, d := range docs {
			if err := writeFile(filepath.Join(path, names[i]+".yaml"), d); err != nil {
				return err
			}
		}
		return nil
	}
	if path != "" {
		return writeFile(path, docs...)
	}
	for _, d := range docs {
		if _, err := d.WriteTo(w); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes docs one after another into the file path, as os.WriteFile does.
func writeFile(path string, docs ...io.WriterTo) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	for _, d := range docs {
		if _, err := d.WriteTo(f); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// IsDirTarget says whether an output path names a directory: it ends in / or is one.
func IsDirTarget(p string) bool {
	if strings.HasSuffix(p, "/") {
		return true
	}
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
