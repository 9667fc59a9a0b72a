// Package tag manages revision tags, as upstream istioctl's `tag` command and its install
// step do: a tag is a MutatingWebhookConfiguration istio-revision-tag-<tag> (labels
// istio.io/tag, istio.io/rev) and a Service istiod-revision-tag-<tag> that make namespaces
// labelled istio.io/rev=<tag> injected by the control plane revision the tag points at; the
// tag "default" also takes the namespaces labelled istio-injection=enabled, validation
// (ValidatingWebhookConfiguration istiod-default-validator), and deactivates the default
// revision's own injector. The objects are rendered from the charts through operator/render
// and applied through operator/kube. It decides and reports; it never prints.
package tag
