package images

import (
	"fmt"
	"strings"
)

// Outside are the images of list that are pulled from none of the allowed registries. A
// registry is a host[:port] with an optional path ("registry.example.com:5000/mesh"); an
// image is inside it when its normalized repository is the registry or lies under it, so
// "istio/pilot" is on docker.io and only docker.io or docker.io/istio allow it.
func Outside(list []Image, allowed []string) ([]Image, error) {
	var norm []string
	for _, a := range allowed {
		a = strings.TrimSuffix(strings.TrimSpace(a), "/")
		if a == "" {
			continue
		}
		norm = append(norm, a)
	}
	var out []Image
	for _, im := range list {
		repo, err := Repository(im.Image)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", im.Component, im.Field, err)
		}
		if !under(repo, norm) {
			out = append(out, im)
		}
	}
	return out, nil
}

func under(repo string, allowed []string) bool {
	for _, a := range allowed {
		if repo == a || strings.HasPrefix(repo, a+"/") {
			return true
		}
	}
	return false
}

// OutsideError is a spec that renders or injects images from registries it may not use.
type OutsideError struct {
	Allowed []string
	Images  []Image
}

func (e *OutsideError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d image(s) would be pulled from outside the allowed registries (%s):", len(e.Images), strings.Join(e.Allowed, ", "))
	for _, im := range e.Images {
		fmt.Fprintf(&b, "\n  %s (%s", im.Image, im.Component)
		if im.Container != "" {
			fmt.Fprintf(&b, ", container %s", im.Container)
		}
		if im.Field != "" {
			fmt.Fprintf(&b, "): set by %s", im.Field)
		} else {
			b.WriteString(")")
		}
	}
	b.WriteString("\nset the hub (--set hub=REGISTRY) or the field named to one of the allowed registries")
	return b.String()
}
