// Package images holds the image inventory of an install: every image each component would
// run and the proxy istiod injects, read from a rendered manifest and the injector's values
// it carries; or what runs in a cluster now (pods' containers, injected sidecars, pods'
// sidecar.istio.io/proxyImage annotations). It flags images of registries being retired.
//
// It reads objects it is given; it renders nothing and reaches no cluster or registry.
package images
