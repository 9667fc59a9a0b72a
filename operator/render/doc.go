// Package render turns a resolved install spec into Kubernetes objects: per enabled
// component it translates the spec into Helm values, renders the component's chart with
// the Helm engine, adds pre-rendered CRDs, applies the component's k8s settings, and
// orders the result as upstream does. It never touches a cluster.
package render
