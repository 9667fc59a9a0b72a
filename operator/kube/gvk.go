package kube

import "k8s.io/apimachinery/pkg/runtime/schema"

// The kinds the engine names in code, once each.
var (
	CRDGVK               = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	NamespaceGVK         = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	ServiceGVK           = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	SecretGVK            = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	ConfigMapGVK         = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	PodGVK               = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	EventGVK             = schema.GroupVersionKind{Version: "v1", Kind: "Event"}
	DeploymentGVK        = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	DaemonSetGVK         = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}
	ReplicaSetGVK        = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	EndpointSliceGVK     = schema.GroupVersionKind{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}
	MutatingWebhookGVK   = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"}
	ValidatingWebhookGVK = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}
)
