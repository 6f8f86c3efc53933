/*
Copyright The adminsched scheduler-plugins Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package localcluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// What makes replaying a large snapshot (5,000 nodes, 50,000 bound pods)
// cheaper; doc/performance.md has the figures.

// gcPercent is the GOGC every program of the cluster runs with: Go's
// default (100) spent about an eighth of kube-apiserver's CPU on garbage
// collection while a snapshot was replayed. The price is a larger heap.
const gcPercent = "200"

// adminUser is the user of the static token Config and KubeConfig carry.
// Its group, system:masters, may do anything, as envtest's admin.
const adminUser = "playground-admin"

// writeTokenFile writes a kube-apiserver --token-auth-file granting a new
// random token to adminUser, and returns its path and the token. A bearer
// token costs the API server a map look-up per request; the client
// certificate envtest makes costs a chain verification (an ECDSA signature
// check) per request, 8% of its CPU while replaying a snapshot.
func writeTokenFile(dir string) (string, string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token := hex.EncodeToString(b)
	path := filepath.Join(dir, "tokens.csv")
	line := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", token, adminUser, adminUser)
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		return "", "", err
	}
	return path, token, nil
}

// tokenConfig is cfg (envtest's, with a client certificate) authenticating
// with token instead, and with protobuf, which costs the API server less to
// decode and encode than JSON (kube-controller-manager's clients use it
// too; the dynamic client asks for JSON whatever this says).
func tokenConfig(cfg *rest.Config, token string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.CertData, c.KeyData, c.CertFile, c.KeyFile = nil, nil, "", ""
	c.BearerToken = token
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return c
}

// kubeconfigFor is a kubeconfig file's content reaching cfg's server as
// cfg's token does.
func kubeconfigFor(cfg *rest.Config) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[adminUser] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["default"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: adminUser}
	kc.CurrentContext = "default"
	return clientcmd.Write(*kc)
}

// gcWrapper writes a script into dir that runs bin with GOGC=gcPercent,
// for the programs envtest starts (it takes a binary's path, not its
// environment). exec keeps the process, so envtest stops the program
// itself.
func gcWrapper(dir, bin string) (string, error) {
	if strings.ContainsRune(bin, '\'') {
		return bin, nil // not worth quoting: run it with Go's default
	}
	path := filepath.Join(dir, filepath.Base(bin)+".sh")
	script := fmt.Sprintf("#!/bin/sh\nGOGC=%s exec '%s' \"$@\"\n", gcPercent, bin)
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		return "", err
	}
	return path, nil
}
