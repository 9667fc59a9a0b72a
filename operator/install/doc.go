// Package install applies rendered components to a cluster: components in dependency order
// (each starts once its parents are healthy), inside a component CRDs and namespaces first,
// webhook configurations last; every object by server-side apply with the ownership
// labels; then a readiness wait under one deadline for the whole run, and a prune of what
// we own and no longer render. It reports through typed events and never prints.
package install
