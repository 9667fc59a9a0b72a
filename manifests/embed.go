// Package manifests embeds the Helm charts the installer renders (charts/); a --manifests
// directory's charts/ replaces them.
package manifests

import "embed"

//go:generate ../hack/sync-version.sh
//go:generate go run -C ../tools/crdgen . -pins ../.. -o ../../manifests/charts/base/crds/crd-all.gen.yaml
//go:generate ../hack/sync-helm-profiles.sh

// Charts holds charts/<chart>/... for every component.
//
//go:embed all:charts
var Charts embed.FS
