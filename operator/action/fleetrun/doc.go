// Package fleetrun runs a fleet: x fleet dump, precheck and verify, install and uninstall
// across the clusters a fleet file names. operator/fleet decides what each cluster gets and
// the links; this package carries that out, each cluster by the same actions a
// single-cluster command runs (operator/action: Install, Uninstall, CreateRemoteSecret,
// the checks), each under its cluster's lock, in the order the mesh needs, on the one
// scheduler (operator/schedule): a remote's Base at once and the rest of its install once
// the hook its primary's install ends when its Pilot is ready; links once both their
// clusters stand. The fleet run as a whole
// goes through the plan-then-write protocol (action.Composite).
package fleetrun
