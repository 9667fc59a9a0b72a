package spec

// DocsURL is where this tree's docs/ directory is published: every link a message, hint or
// help text gives is a page (and anchor) under it, so that it works outside the repository.
// The one place it is spelled (operator/check's registry test resolves the anchors).
const DocsURL = "https://github.com/istioctl-installer/istioctl/blob/main/docs/"
