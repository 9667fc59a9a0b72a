package registry

import "encoding/base64"

func encode(userPass string) string { return base64.StdEncoding.EncodeToString([]byte(userPass)) }
