package main

import (
	"os/exec"
	"strings"
	"testing"
)

// helmAllowed are the Helm packages istioctl may link: those that load and render charts.
// Helm's action, storage, kube and CLI packages would add their start-up and memory to
// every command; the migration reads Helm's release records without them
// (operator/helmrelease), and the tests drive the helm CLI built by hack/kube/build.sh.
var helmAllowed = []string{
	"helm.sh/helm/v3/pkg/chart", // and pkg/chart/loader
	"helm.sh/helm/v3/pkg/chartutil",
	"helm.sh/helm/v3/pkg/engine",
	"helm.sh/helm/v3/pkg/ignore",
	"helm.sh/helm/v3/internal/",
}

func TestNoHelmActionPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	linked := 0
	for _, pkg := range strings.Fields(string(out)) {
		if !strings.HasPrefix(pkg, "helm.sh/") {
			continue
		}
		linked++
		ok := false
		for _, a := range helmAllowed {
			ok = ok || pkg == a || strings.HasPrefix(pkg, strings.TrimSuffix(a, "/")+"/")
		}
		if !ok {
			t.Errorf("istioctl links %s: only Helm's chart rendering packages may be linked (%v)", pkg, helmAllowed)
		}
	}
	if linked == 0 {
		t.Error("istioctl links no Helm package at all: is go list listing the right package?")
	}
}
