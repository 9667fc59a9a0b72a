package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// apiModule is where the .proto sources come from: a directory laid out as the istio.io/api
// module is (the module cache's copy, or a test's fixture), and the module's version.
type apiModule struct {
	Dir     string
	Version string
}

// findAPIModule asks the go command for the istio.io/api module the module in dir pins
// (istioctl's go.mod: the version line; crdgen is a module of its own and pins none),
// downloading it into the module cache when it is not there yet.
func findAPIModule(dir string) (apiModule, error) {
	cmd := exec.Command("go", "mod", "download", "-json", "istio.io/api")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return apiModule{}, fmt.Errorf("go mod download istio.io/api: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var m apiModule
	if err := json.Unmarshal(out, &m); err != nil {
		return apiModule{}, fmt.Errorf("go mod download istio.io/api: %w", err)
	}
	if m.Dir == "" || m.Version == "" {
		return apiModule{}, fmt.Errorf("go mod download istio.io/api: no directory or version in %s", out)
	}
	return m, nil
}

// statusProto declares the status every Istio CRD shares (istio.meta.v1alpha1.IstioStatus).
const statusProto = "meta/v1alpha1/status.proto"

// commonProtos is the module's copy of the imports it does not own (google/api/...).
const commonProtos = "common-protos"

// compile parses and links every .proto file of the module that declares a CRD (holds a
// +cue-gen marker), and the status file, keeping comments (source info) for descriptions
// and markers. Only .proto files are read: never the module's own generated CRDs.
func compile(dir string) ([]protoreflect.FileDescriptor, error) {
	var names []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != dir && (d.Name() == commonProtos || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".proto") {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rel == statusProto || bytes.Contains(b, []byte("+cue-gen:")) {
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			ImportPaths: []string{dir, filepath.Join(dir, commonProtos)},
		}),
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	files, err := c.Compile(context.Background(), names...)
	if err != nil {
		return nil, fmt.Errorf("compiling the .proto files of %s: %w", dir, err)
	}
	out := make([]protoreflect.FileDescriptor, len(files))
	for i, f := range files {
		out[i] = f
	}
	return out, nil
}

// comments is the leading comment of a declaration, as written (one line per line).
func comments(d protoreflect.Descriptor) string {
	return d.ParentFile().SourceLocations().ByDescriptor(d).LeadingComments
}

// fileDoc reads the file's documentation keys ($description, $location, ...) from the
// comment block before its package statement.
func fileDoc(f protoreflect.FileDescriptor) map[string]string {
	out := map[string]string{}
	locs := f.SourceLocations()
	// Path [2] is the package statement (FileDescriptorProto field 2).
	loc := locs.ByPath(protoreflect.SourcePath{2})
	for _, block := range loc.LeadingDetachedComments {
		for _, line := range strings.Split(block, "\n") {
			line = strings.TrimSpace(line)
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(k, "$") {
				out[k[1:]] = strings.TrimSpace(v)
			}
		}
	}
	return out
}
