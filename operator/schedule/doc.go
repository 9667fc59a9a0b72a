// Package schedule is the one runner of dependency graphs: the components of an install
// within a cluster and the clusters and links of a fleet. A node runs once what it needs
// stands, beside every other node that may; what it needs are readiness hooks: the end of
// another node, or a point a run reports on its way (a cluster's Pilot ready). A hook ends
// once, standing or failed; a node whose need failed does not run. Nothing here reads an
// event stream: runs say what stands by ending hooks.
package schedule
