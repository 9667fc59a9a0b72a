package v1alpha1

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ExternalSpec declares what an install relies on but does not install: a control plane
// that already runs in the cluster or one that runs elsewhere, the certificate authority,
// and Prometheus. It is this tool's extension of the IstioOperator API (upstream istioctl
// has no spec.external and rejects it); resolution translates it into upstream's Helm values,
// so the charts stay upstream-compatible. See docs/external-components.md.
type ExternalSpec struct {
	// ControlPlane is an istiod (and its Base CRDs) already installed in this cluster, by
	// this tool with another spec or by Helm: this spec installs no control plane, its
	// components are wired to that one, and it is never changed or pruned.
	ControlPlane *ExternalControlPlane `json:"controlPlane,omitempty"`
	// Remote is an istiod running outside this cluster (primary-remote, external control
	// plane): profile remote with the address filled in.
	Remote *ExternalRemote `json:"remote,omitempty"`
	// CA says who signs workload certificates.
	CA *ExternalCA `json:"ca,omitempty"`
	// Prometheus is the Prometheus that scrapes the mesh.
	Prometheus *ExternalPrometheus `json:"prometheus,omitempty"`
}

// ExternalControlPlane names an existing control plane in this cluster.
type ExternalControlPlane struct {
	// Namespace is where istiod runs (default: values.global.istioNamespace, istio-system).
	Namespace string `json:"namespace,omitempty"`
	// Revision is istiod's revision (default: spec.revision; "default" for none).
	Revision string `json:"revision,omitempty"`
}

// AnnotationControlPlaneClusters on a remote's istio namespace names the clusters whose
// istiod manages it (upstream's pilot reads it: checkShouldLead).
const AnnotationControlPlaneClusters = "topology.istio.io/controlPlaneClusters"

// ExternalRemote points at an istiod outside the cluster.
type ExternalRemote struct {
	// Address is the remote istiod's IP address or host name (global.remotePilotAddress).
	Address string `json:"address,omitempty"`
	// InjectionURL is the sidecar injector's URL when the webhooks call it directly
	// (istiodRemote.injectionURL); empty: through the istiod Service that points at Address.
	InjectionURL string `json:"injectionURL,omitempty"`
	// ControlPlaneClusters are the IDs of the clusters whose istiod (with EXTERNAL_ISTIOD)
	// controls this one, comma-separated, or "*": the topology.istio.io/controlPlaneClusters
	// annotation of the istio namespace, written before anything else of the install.
	ControlPlaneClusters string `json:"controlPlaneClusters,omitempty"`
}

// The CA types.
const (
	CAIstiod     = "istiod"
	CACacerts    = "cacerts"
	CAExternal   = "external"
	CAKubernetes = "kubernetes"
)

// DefaultCASecret is the Secret istiod reads a plugged-in CA from.
const DefaultCASecret = "cacerts"

// ExternalCA says who signs workload certificates.
type ExternalCA struct {
	// Type is istiod (self-signed, the default), cacerts (istiod signs with a CA you plug in
	// as a Secret), external (a CA server such as cert-manager istio-csr at Address) or
	// kubernetes (Kubernetes CSRs, signed by Signer).
	Type string `json:"type,omitempty" enum:"istiod,cacerts,external,kubernetes"`
	// Address is the external CA's gRPC address, host:port (type external).
	Address string `json:"address,omitempty"`
	// Signer is the Kubernetes signer name, e.g. example.com/istio (type kubernetes).
	Signer string `json:"signer,omitempty"`
	// SecretName is the plugged-in CA's Secret in the control plane's namespace (type
	// cacerts; default cacerts).
	SecretName string `json:"secretName,omitempty"`
}

// ExternalPrometheus is where the mesh's metrics are scraped from: a Service in this cluster
// or a URL outside it.
type ExternalPrometheus struct {
	// Service is namespace/name:port.
	Service string `json:"service,omitempty"`
	// URL is http(s)://host[:port][/path] of a Prometheus outside the cluster.
	URL string `json:"url,omitempty"`
}

// ServiceRef is a parsed namespace/name:port.
type ServiceRef struct {
	Namespace, Name, Port string
}

func (s ServiceRef) String() string {
	return s.Namespace + "/" + s.Name + ":" + s.Port
}

// ParseServiceRef parses namespace/name:port; the port is a number or a port name.
func ParseServiceRef(s string) (ServiceRef, error) {
	ns, rest, ok := strings.Cut(s, "/")
	if !ok {
		return ServiceRef{}, fmt.Errorf("%q: want namespace/name:port, e.g. monitoring/prometheus:9090", s)
	}
	name, port, ok := strings.Cut(rest, ":")
	if !ok || port == "" {
		return ServiceRef{}, fmt.Errorf("%q: want namespace/name:port with a port, e.g. monitoring/prometheus:9090", s)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return ServiceRef{}, fmt.Errorf("%q: namespace %q is not a valid namespace name", s, ns)
	}
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		return ServiceRef{}, fmt.Errorf("%q: %q is not a valid Service name", s, name)
	}
	if err := checkPort(port); err != nil {
		return ServiceRef{}, fmt.Errorf("%q: %v", s, err)
	}
	return ServiceRef{Namespace: ns, Name: name, Port: port}, nil
}

func checkPort(port string) error {
	if n, err := strconv.Atoi(port); err == nil {
		if n < 1 || n > 65535 {
			return fmt.Errorf("port %d is not in 1-65535", n)
		}
		return nil
	}
	if errs := validation.IsValidPortName(port); len(errs) > 0 {
		return fmt.Errorf("%q is neither a port number nor a port name", port)
	}
	return nil
}

// ParseCAAddress checks a host:port address. When the host names a Service of this cluster
// (name.namespace.svc, optionally followed by the cluster domain), it returns that Service.
func ParseCAAddress(addr string) (svc *ServiceRef, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return nil, fmt.Errorf("%q: want host:port, e.g. cert-manager-istio-csr.cert-manager.svc:443", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("%q: the port must be a number in 1-65535", addr)
	}
	if net.ParseIP(host) == nil {
		if errs := validation.IsDNS1123Subdomain(host); len(errs) > 0 {
			return nil, fmt.Errorf("%q: %q is not a host name", addr, host)
		}
	}
	labels := strings.Split(host, ".")
	if len(labels) >= 3 && labels[2] == "svc" {
		return &ServiceRef{Namespace: labels[1], Name: labels[0], Port: port}, nil
	}
	return nil, nil
}

// CheckRemoteAddress checks a remote istiod address: an IP address or a host name, no port.
func CheckRemoteAddress(addr string) error {
	if net.ParseIP(addr) != nil {
		return nil
	}
	if strings.Contains(addr, ":") {
		return fmt.Errorf("%q: give the IP address or host name only; istiod is reached on its usual ports (15012, 15017)", addr)
	}
	if errs := validation.IsDNS1123Subdomain(addr); len(errs) > 0 {
		return fmt.Errorf("%q is neither an IP address nor a host name", addr)
	}
	return nil
}

// CheckURL checks an http(s) URL with a host (https only when httpsOnly).
func CheckURL(s string, httpsOnly bool) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && (httpsOnly || u.Scheme != "http")) {
		if httpsOnly {
			return fmt.Errorf("%q: want an https:// URL with a host", s)
		}
		return fmt.Errorf("%q: want an http:// or https:// URL with a host", s)
	}
	return nil
}
