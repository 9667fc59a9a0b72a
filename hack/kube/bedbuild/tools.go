//go:build tools

// Package bedbuild pins every third-party command the test bed runs, in one module so that
// the libraries they share (client-go, apimachinery, gRPC, protobuf, OpenTelemetry) are
// compiled once, at one version, with the flags our own builds use.
package bedbuild

import (
	_ "helm.sh/helm/v3/cmd/helm"
	_ "istio.io/istio/pilot/cmd/pilot-discovery"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
