//go:build tools

// Package helmbuild only pins the helm CLI the migration tests drive (bin/helm). It is
// a module of its own so that Helm's CLI and action packages never enter istioctl's
// go.mod or binary.
package helmbuild

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
