// Package kube is the only way the engine reaches a cluster: a client bundle built from
// the connection flags (operator/kubeflags: dynamic, metadata, discovery, REST mapper) and the few
// cluster reads and writes the installer needs. It decides nothing about what to apply and
// knows no control plane: who it applies as (the field manager, the fields it yields to
// controllers) is given as options (FieldManager, ControllerFields); finding istiod is
// operator/revision's. Objects are named by operator/kube/ref, a leaf that needs no client.
package kube
