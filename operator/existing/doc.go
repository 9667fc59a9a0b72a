// Package existing finds, in a cluster, the pieces an install relies on but does not
// install (an istiod, the Base CRDs, the CNI node agent) and says who manages an object:
// istioctl (its ownership labels), a Helm release (Helm's annotations), or some other field
// manager. It reads only; checks and the install decide what to make of it.
package existing
