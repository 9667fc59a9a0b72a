package cmd_test

import (
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

func TestMain(m *testing.M) { cluster.Main(m) }
