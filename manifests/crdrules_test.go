package manifests_test

import "strings"

// ruleCase is one validation rule of the API's CRDs: an object the rule rejects and its
// valid counterpart, which differs only where the rule looks.
type ruleCase struct {
	name string
	// rule is the kind of rule: CEL, required, length, items, pattern or range.
	rule string
	// apiVersion and kind of the objects.
	apiVersion, kind string
	// valid and invalid are the objects' spec, in YAML.
	valid, invalid string
	// want is what the apiserver's answer must say: the CEL rule's message, or the limit.
	want string
}

const (
	networkingV1 = "networking.istio.io/v1"
	securityV1   = "security.istio.io/v1"
)

// long is a string of n letters.
func long(n int) string { return strings.Repeat("a", n) }

// The rules, each from the API's .proto markers (istio.io/api), as the CRDs carry them.
var ruleCases = []ruleCase{
	// ServiceEntry
	{"se-selector-and-endpoints", "CEL", networkingV1, "ServiceEntry",
		`{hosts: [a.example.com], resolution: STATIC, endpoints: [{address: 10.0.0.1}]}`,
		`{hosts: [a.example.com], resolution: STATIC, endpoints: [{address: 10.0.0.1}], workloadSelector: {labels: {app: a}}}`,
		"only one of WorkloadSelector or Endpoints can be set"},
	{"se-none-with-endpoints", "CEL", networkingV1, "ServiceEntry",
		`{hosts: [a.example.com], resolution: STATIC, endpoints: [{address: 10.0.0.1}]}`,
		`{hosts: [a.example.com], resolution: NONE, endpoints: [{address: 10.0.0.1}]}`,
		"NONE mode cannot set endpoints"},
	{"se-wildcard-host", "CEL", networkingV1, "ServiceEntry",
		`{hosts: ["*.example.com"]}`, `{hosts: ["*"]}`,
		"hostname cannot be wildcard"},
	{"se-port-range", "CEL", networkingV1, "ServiceEntry",
		`{hosts: [a.example.com], ports: [{number: 65535, name: http}]}`,
		`{hosts: [a.example.com], ports: [{number: 65536, name: http}]}`,
		"port must be between 1-65535"},
	{"se-duplicate-port", "CEL", networkingV1, "ServiceEntry",
		`{hosts: [a.example.com], ports: [{number: 80, name: http}, {number: 81, name: http2}]}`,
		`{hosts: [a.example.com], ports: [{number: 80, name: http}, {number: 80, name: http2}]}`,
		"port number cannot be duplicated"},
	{"se-no-hosts", "required", networkingV1, "ServiceEntry",
		`{hosts: [a.example.com], location: MESH_EXTERNAL}`, `{location: MESH_EXTERNAL}`,
		"spec.hosts: Required value"},
	{"se-empty-hosts", "items", networkingV1, "ServiceEntry",
		`{hosts: [a.example.com]}`, `{hosts: []}`,
		"spec.hosts: Invalid value: 0: spec.hosts in body should have at least 1 items"},
	{"se-port-no-name", "required", networkingV1, "ServiceEntry",
		`{hosts: [a.example.com], ports: [{number: 80, name: http}]}`,
		`{hosts: [a.example.com], ports: [{number: 80}]}`,
		"spec.ports[0].name: Required value"},
	{"se-address-too-long", "length", networkingV1, "ServiceEntry",
		`{hosts: [a.example.com], addresses: [` + long(64) + `]}`,
		`{hosts: [a.example.com], addresses: [` + long(65) + `]}`,
		"spec.addresses[0]: Too long: may not be more than 64 bytes"},
	// WorkloadEntry
	{"we-no-address", "CEL", networkingV1, "WorkloadEntry",
		`{address: 10.0.0.1}`, `{labels: {app: a}}`,
		"Address is required"},
	{"we-service-account-too-long", "length", networkingV1, "WorkloadEntry",
		`{address: 10.0.0.1, serviceAccount: ` + long(253) + `}`,
		`{address: 10.0.0.1, serviceAccount: ` + long(254) + `}`,
		"spec.serviceAccount: Too long: may not be more than 253 bytes"},
	// DestinationRule
	{"dr-no-host", "required", networkingV1, "DestinationRule",
		`{host: reviews, trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}}`, `{trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}}`,
		"spec.host: Required value"},
	{"dr-warmup-percent", "range", networkingV1, "DestinationRule",
		`{host: reviews, trafficPolicy: {loadBalancer: {simple: ROUND_ROBIN, warmup: {duration: 10s, minimumPercent: 100}}}}`,
		`{host: reviews, trafficPolicy: {loadBalancer: {simple: ROUND_ROBIN, warmup: {duration: 10s, minimumPercent: 101}}}}`,
		"should be less than or equal to 100"},
	// VirtualService
	{"vs-zero-timeout", "CEL", networkingV1, "VirtualService",
		`{hosts: [reviews], http: [{route: [{destination: {host: reviews}}], timeout: 1ms}]}`,
		`{hosts: [reviews], http: [{route: [{destination: {host: reviews}}], timeout: 0s}]}`,
		"must be a valid duration greater than 1ms"},
	{"vs-destination-no-host", "required", networkingV1, "VirtualService",
		`{hosts: [reviews], http: [{route: [{destination: {host: reviews, subset: v1}}]}]}`,
		`{hosts: [reviews], http: [{route: [{destination: {subset: v1}}]}]}`,
		"spec.http[0].route[0].destination.host: Required value"},
	// Gateway
	{"gw-two-credentials", "CEL", networkingV1, "Gateway",
		`{servers: [{port: {number: 443, name: https, protocol: HTTPS}, hosts: ["*"], tls: {mode: SIMPLE, credentialName: cert}}]}`,
		`{servers: [{port: {number: 443, name: https, protocol: HTTPS}, hosts: ["*"], tls: {mode: SIMPLE, credentialName: cert, credentialNames: [cert2]}}]}`,
		"only one of credentialName or credentialNames can be set"},
	// AuthorizationPolicy
	{"ap-selector-and-targetrefs", "CEL", securityV1, "AuthorizationPolicy",
		`{targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]}`,
		`{selector: {matchLabels: {app: a}}, targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]}`,
		"only one of targetRefs or selector can be set"},
	{"ap-wildcard-label-key", "CEL", securityV1, "AuthorizationPolicy",
		`{selector: {matchLabels: {app: a}}}`, `{selector: {matchLabels: {"*": a}}}`,
		"wildcard not allowed in label key match"},
	{"ap-targetref-kind", "pattern", securityV1, "AuthorizationPolicy",
		`{targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]}`,
		`{targetRefs: [{group: gateway.networking.k8s.io, kind: "1Gateway", name: gw}]}`,
		"spec.targetRefs[0].kind in body should match '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$'"},
	// PeerAuthentication
	{"pa-port-mtls-without-selector", "CEL", securityV1, "PeerAuthentication",
		`{selector: {matchLabels: {app: a}}, portLevelMtls: {"8080": {mode: DISABLE}}}`,
		`{portLevelMtls: {"8080": {mode: DISABLE}}}`,
		"portLevelMtls requires selector"},
	// RequestAuthentication
	{"ra-jwks-uri-scheme", "CEL", securityV1, "RequestAuthentication",
		`{jwtRules: [{issuer: a, jwksUri: "https://a.example.com/jwks"}]}`,
		`{jwtRules: [{issuer: a, jwksUri: "ftp://a.example.com/jwks"}]}`,
		"url must have scheme http:// or https://"},
	{"ra-jwks-and-uri", "CEL", securityV1, "RequestAuthentication",
		`{jwtRules: [{issuer: a, jwks: "{}"}]}`,
		`{jwtRules: [{issuer: a, jwks: "{}", jwksUri: "https://a.example.com/jwks"}]}`,
		"only one of jwks or jwksUri can be set"},
	{"ra-empty-issuer", "length", securityV1, "RequestAuthentication",
		`{jwtRules: [{issuer: a}]}`, `{jwtRules: [{issuer: ""}]}`,
		"spec.jwtRules[0].issuer: Invalid value: \"\": spec.jwtRules[0].issuer in body should be at least 1 chars long"},
	{"ra-claim-header", "pattern", securityV1, "RequestAuthentication",
		`{jwtRules: [{issuer: a, outputClaimToHeaders: [{header: x-user, claim: sub}]}]}`,
		`{jwtRules: [{issuer: a, outputClaimToHeaders: [{header: "x user", claim: sub}]}]}`,
		"should match '^[-_A-Za-z0-9]+$'"},
	// Telemetry
	{"telemetry-sampling", "range", "telemetry.istio.io/v1", "Telemetry",
		`{tracing: [{randomSamplingPercentage: 100}]}`, `{tracing: [{randomSamplingPercentage: 150}]}`,
		"spec.tracing[0].randomSamplingPercentage: Invalid value: 150: spec.tracing[0].randomSamplingPercentage in body should be less than or equal to 100"},
	// WasmPlugin
	{"wasm-url-scheme", "CEL", "extensions.istio.io/v1alpha1", "WasmPlugin",
		`{url: "oci://registry.example.com/filter:1"}`, `{url: "ftp://registry.example.com/filter"}`,
		"url must have schema one of [http, https, file, oci]"},
	{"wasm-sha256", "pattern", "extensions.istio.io/v1alpha1", "WasmPlugin",
		`{url: "oci://registry.example.com/filter:1", sha256: ` + strings.Repeat("ab", 32) + `}`,
		`{url: "oci://registry.example.com/filter:1", sha256: abc}`,
		"spec.sha256 in body should match '(^$|^[a-f0-9]{64}$)'"},
	{"wasm-env-host-value", "CEL", "extensions.istio.io/v1alpha1", "WasmPlugin",
		`{url: "oci://registry.example.com/filter:1", vmConfig: {env: [{name: POD_NAME, valueFrom: HOST}]}}`,
		`{url: "oci://registry.example.com/filter:1", vmConfig: {env: [{name: POD_NAME, valueFrom: HOST, value: x}]}}`,
		"value may only be set when valueFrom is INLINE"},
	// TrafficExtension
	{"te-wasm-and-lua", "CEL", "extensions.istio.io/v1alpha1", "TrafficExtension",
		`{lua: {inlineCode: "function envoy_on_request(h) end"}}`,
		`{lua: {inlineCode: "function envoy_on_request(h) end"}, wasm: {url: "oci://registry.example.com/filter:1"}}`,
		"exactly one of wasm or lua must be set"},
	{"te-port-zero", "range", "extensions.istio.io/v1alpha1", "TrafficExtension",
		`{lua: {inlineCode: "x"}, match: [{ports: [{number: 1}]}]}`,
		`{lua: {inlineCode: "x"}, match: [{ports: [{number: 0}]}]}`,
		"spec.match[0].ports[0].number in body should be greater than or equal to 1"},
}
