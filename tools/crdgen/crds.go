package main

// The CRDs Base installs: names, versions, printer columns and the proto message each version
// serves. These are facts of Istio's API that the descriptors do not carry.

type column struct {
	Name, Type, JSONPath, Description string
}

type version struct {
	Name            string
	Served, Storage bool
}

type crd struct {
	Group, Kind, Plural, Singular string
	ShortNames                    []string
	Categories                    []string
	// Message is the full name of the spec message (every version serves the same one).
	Message  string
	Versions []version
	Columns  []column
}

var ageColumn = column{"Age", "date", ".metadata.creationTimestamp",
	"CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC. Populated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}

// networking.istio.io kinds served as v1 (storage), v1alpha3 and v1beta1.
var v1Triple = []version{{"v1", true, true}, {"v1alpha3", true, false}, {"v1beta1", true, false}}

// security.istio.io kinds served as v1 (storage) and v1beta1.
var v1Pair = []version{{"v1", true, true}, {"v1beta1", true, false}}

var crds = []crd{
	{Group: "extensions.istio.io", Kind: "TrafficExtension", Plural: "trafficextensions", Singular: "trafficextension",
		Categories: []string{"istio-io", "extensions-istio-io"}, Message: "istio.extensions.v1alpha1.TrafficExtension",
		Versions: []version{{"v1alpha1", true, true}}, Columns: []column{ageColumn}},
	{Group: "extensions.istio.io", Kind: "WasmPlugin", Plural: "wasmplugins", Singular: "wasmplugin",
		Categories: []string{"istio-io", "extensions-istio-io"}, Message: "istio.extensions.v1alpha1.WasmPlugin",
		Versions: []version{{"v1alpha1", true, true}}, Columns: []column{ageColumn}},
	{Group: "networking.istio.io", Kind: "DestinationRule", Plural: "destinationrules", Singular: "destinationrule",
		ShortNames: []string{"dr"}, Categories: []string{"istio-io", "networking-istio-io"},
		Message: "istio.networking.v1alpha3.DestinationRule", Versions: v1Triple,
		Columns: []column{{"Host", "string", ".spec.host", "The name of a service from the service registry"}, ageColumn}},
	{Group: "networking.istio.io", Kind: "EnvoyFilter", Plural: "envoyfilters", Singular: "envoyfilter",
		Categories: []string{"istio-io", "networking-istio-io"}, Message: "istio.networking.v1alpha3.EnvoyFilter",
		Versions: []version{{"v1alpha3", true, true}}},
	{Group: "networking.istio.io", Kind: "Gateway", Plural: "gateways", Singular: "gateway",
		ShortNames: []string{"gw"}, Categories: []string{"istio-io", "networking-istio-io"},
		Message: "istio.networking.v1alpha3.Gateway", Versions: v1Triple},
	{Group: "networking.istio.io", Kind: "ProxyConfig", Plural: "proxyconfigs", Singular: "proxyconfig",
		Categories: []string{"istio-io", "networking-istio-io"}, Message: "istio.networking.v1beta1.ProxyConfig",
		Versions: []version{{"v1beta1", true, true}}},
	{Group: "networking.istio.io", Kind: "ServiceEntry", Plural: "serviceentries", Singular: "serviceentry",
		ShortNames: []string{"se"}, Categories: []string{"istio-io", "networking-istio-io"},
		Message: "istio.networking.v1alpha3.ServiceEntry", Versions: v1Triple,
		Columns: []column{
			{"Hosts", "string", ".spec.hosts", "The hosts associated with the ServiceEntry"},
			{"Location", "string", ".spec.location", "Whether the service is external to the mesh or part of the mesh (MESH_EXTERNAL or MESH_INTERNAL)"},
			{"Resolution", "string", ".spec.resolution", "Service resolution mode for the hosts (NONE, STATIC, or DNS)"},
			ageColumn,
		}},
	{Group: "networking.istio.io", Kind: "Sidecar", Plural: "sidecars", Singular: "sidecar",
		Categories: []string{"istio-io", "networking-istio-io"}, Message: "istio.networking.v1alpha3.Sidecar", Versions: v1Triple},
	{Group: "networking.istio.io", Kind: "VirtualService", Plural: "virtualservices", Singular: "virtualservice",
		ShortNames: []string{"vs"}, Categories: []string{"istio-io", "networking-istio-io"},
		Message: "istio.networking.v1alpha3.VirtualService", Versions: v1Triple,
		Columns: []column{
			{"Gateways", "string", ".spec.gateways", "The names of gateways and sidecars that should apply these routes"},
			{"Hosts", "string", ".spec.hosts", "The destination hosts to which traffic is being sent"},
			ageColumn,
		}},
	{Group: "networking.istio.io", Kind: "WorkloadEntry", Plural: "workloadentries", Singular: "workloadentry",
		ShortNames: []string{"we"}, Categories: []string{"istio-io", "networking-istio-io"},
		Message: "istio.networking.v1alpha3.WorkloadEntry", Versions: v1Triple,
		Columns: []column{ageColumn, {"Address", "string", ".spec.address", "Address associated with the network endpoint."}}},
	{Group: "networking.istio.io", Kind: "WorkloadGroup", Plural: "workloadgroups", Singular: "workloadgroup",
		ShortNames: []string{"wg"}, Categories: []string{"istio-io", "networking-istio-io"},
		Message: "istio.networking.v1alpha3.WorkloadGroup", Versions: v1Triple, Columns: []column{ageColumn}},
	{Group: "security.istio.io", Kind: "AuthorizationPolicy", Plural: "authorizationpolicies", Singular: "authorizationpolicy",
		ShortNames: []string{"ap"}, Categories: []string{"istio-io", "security-istio-io"},
		Message: "istio.security.v1beta1.AuthorizationPolicy", Versions: v1Pair,
		Columns: []column{{"Action", "string", ".spec.action", "The operation to take."}, ageColumn}},
	{Group: "security.istio.io", Kind: "PeerAuthentication", Plural: "peerauthentications", Singular: "peerauthentication",
		ShortNames: []string{"pa"}, Categories: []string{"istio-io", "security-istio-io"},
		Message: "istio.security.v1beta1.PeerAuthentication", Versions: v1Pair,
		Columns: []column{{"Mode", "string", ".spec.mtls.mode", "Defines the mTLS mode used for peer authentication."}, ageColumn}},
	{Group: "security.istio.io", Kind: "RequestAuthentication", Plural: "requestauthentications", Singular: "requestauthentication",
		ShortNames: []string{"ra"}, Categories: []string{"istio-io", "security-istio-io"},
		Message: "istio.security.v1beta1.RequestAuthentication", Versions: v1Pair},
	{Group: "telemetry.istio.io", Kind: "Telemetry", Plural: "telemetries", Singular: "telemetry",
		ShortNames: []string{"telemetry"}, Categories: []string{"istio-io", "telemetry-istio-io"},
		Message: "istio.telemetry.v1alpha1.Telemetry", Versions: []version{{"v1", true, false}, {"v1alpha1", true, true}}, Columns: []column{ageColumn}},
}
