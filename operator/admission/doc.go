// Package admission asks the cluster whether it would admit what an install creates, by
// server-side dry runs (nothing is written): every rendered object as the install applies
// it, and a pod built from each workload's template, as its controller would create it.
// Each refusal comes back named with its admission layer (Pod Security, ResourceQuota,
// LimitRange, ValidatingAdmissionPolicy, a webhook; readiness.Classify reads them, the
// one place that says which are permanent). A question the apiserver cannot answer by a
// dry run (a webhook with side effects, one that cannot be called) comes back as "cannot
// check", not as a refusal. References reads, from the rendered install alone, the
// ConfigMaps and Secrets a workload's pods cannot start without; Missing says which of
// them neither the install nor the cluster has. Precheck and install's plan (before its
// prompt) report both; install's wait re-asks for a workload whose pods were refused
// before it gives up.
package admission
