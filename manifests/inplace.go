package manifests

import (
	"strings"
	"sync"
	"unsafe"
)

// embedFile is an entry of an embed.FS as the compiler lays it out (embed.file: name,
// data, hash); embedFS is embed.FS (a pointer to the sorted entries).
type embedFile struct {
	name string
	data string
	hash [16]byte
}

type embedFS struct{ files *[]embedFile }

// chartData maps each file of Charts to its content, read where the binary maps it.
var chartData = sync.OnceValue(func() map[string]string {
	files := (*embedFS)(unsafe.Pointer(&Charts)).files
	if files == nil {
		return nil
	}
	m := make(map[string]string, len(*files))
	for _, f := range *files {
		if !strings.HasPrefix(f.name, "charts/") {
			return nil // not the layout this mirrors: every caller falls back to a copy
		}
		if !strings.HasSuffix(f.name, "/") {
			m[f.name] = f.data
		}
	}
	return m
})

// InPlace returns the content of the file name of Charts ("charts/base/Chart.yaml") as
// the binary holds it, false when it cannot (fs.ReadFile then copies it). Read in place,
// a render's chart files are not a second copy on the heap; nothing may write into the
// bytes of such a string (a write would fault: they are read-only).
func InPlace(name string) (string, bool) {
	s, ok := chartData()[name]
	return s, ok
}
