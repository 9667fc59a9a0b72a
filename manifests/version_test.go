package manifests_test

import (
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	"golang.org/x/mod/modfile"

	"github.com/istioctl-installer/istioctl/manifests"
	"github.com/istioctl-installer/istioctl/pkg/version"
	"github.com/istioctl-installer/istioctl/profiles"
)

// versionLine is the one place the Istio version is written: the istio.io/api version
// go.mod pins (the CRDs come from that module's .proto sources).
func versionLine(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.ParseLax("go.mod", b, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Require {
		if r.Mod.Path == "istio.io/api" {
			return strings.TrimPrefix(r.Mod.Version, "v")
		}
	}
	t.Fatal("go.mod requires no istio.io/api")
	return ""
}

var semverTag = regexp.MustCompile(`(?m)^\s*tag: "?([0-9]+\.[0-9]+\.[0-9]+)"?$`)

// TestVersionLine: the charts' versions, the image tags of the charts and of the default
// profile, the version the build reports and the CRDs' labels all say the version line
// (make generate stamps them; hack/sync-version.sh).
func TestVersionLine(t *testing.T) {
	want := versionLine(t)
	check := func(what, got string) {
		t.Helper()
		if got != want {
			t.Errorf("%s is %q, want %q (the istio.io/api version in go.mod): run make generate", what, got, want)
		}
	}
	check("pkg/version.Version", version.Version)
	charts := 0
	err := fs.WalkDir(manifests.Charts, "charts", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := manifests.Charts.ReadFile(path)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(path, "/Chart.yaml"):
			var meta struct {
				Version    string `yaml:"version"`
				AppVersion string `yaml:"appVersion"`
			}
			if err := yaml.Unmarshal(b, &meta); err != nil {
				return err
			}
			check(path+" version", meta.Version)
			check(path+" appVersion", meta.AppVersion)
			charts++
		case strings.HasSuffix(path, "/values.yaml"):
			for _, m := range semverTag.FindAllStringSubmatch(string(b), -1) {
				check(path+" tag", m[1])
			}
		case strings.HasSuffix(path, "/crd-all.gen.yaml"):
			for _, m := range regexp.MustCompile(`app.kubernetes.io/version: (\S+)`).FindAllStringSubmatch(string(b), -1) {
				check(path+" label", m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if charts < 6 {
		t.Errorf("checked %d charts, want every chart (6 or more)", charts)
	}
	b, err := profiles.FS.ReadFile("default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tags := semverTag.FindAllStringSubmatch(string(b), -1)
	if len(tags) != 1 {
		t.Fatalf("profiles/default.yaml names %d tags, want 1", len(tags))
	}
	check("profiles/default.yaml tag", tags[0][1])
}
