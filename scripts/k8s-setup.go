//go:build ignore

// Files for the one-node cluster scripts/k8s-test.sh starts, made with Go's
// standard library only (run with `go run scripts/k8s-setup.go ...`):
//
//	pki DIR NODE SERVER   a CA, the API server's serving certificate, the
//	                      kubelet's, the service-account signing key, and a
//	                      kubeconfig with a client certificate for the
//	                      admin (system:masters), the controller manager,
//	                      the scheduler and the kubelet (system:node:NODE),
//	                      each naming SERVER (https://127.0.0.1:PORT)
//	image BINARY OUT NAME an OCI image archive holding BINARY as /pause,
//	                      its entry point, for `ctr images import`; the
//	                      image is called NAME
//
// Keys are ECDSA P-256; certificates last two days (a test cluster).
package main

import (
	"archive/tar"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

func main() {
	var err error
	switch {
	case len(os.Args) == 5 && os.Args[1] == "pki":
		err = pki(os.Args[2], os.Args[3], os.Args[4])
	case len(os.Args) == 5 && os.Args[1] == "image":
		err = image(os.Args[2], os.Args[3], os.Args[4])
	default:
		err = fmt.Errorf("usage: k8s-setup.go pki DIR NODE SERVER | image BINARY OUT NAME")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "k8s-setup:", err)
		os.Exit(1)
	}
}

type keyPair struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	der  []byte
}

// issue signs a certificate for tmpl with a new key, by ca (self-signed
// when ca is nil).
func issue(tmpl *x509.Certificate, ca *keyPair) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(48 * time.Hour)
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert, key, der}, nil
}

func pemOf(kp *keyPair) (certPEM, keyPEM []byte, err error) {
	k, err := x509.MarshalECPrivateKey(kp.key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: kp.der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: k}), nil
}

// write stores kp as DIR/NAME.crt and DIR/NAME.key (0600).
func write(dir, name string, kp *keyPair) error {
	c, k, err := pemOf(kp)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), c, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".key"), k, 0o600)
}

func pki(dir, node, server string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "unlearn-test-ca"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil)
	if err != nil {
		return err
	}
	if err := write(dir, "ca", ca); err != nil {
		return err
	}
	serving := func(cn string, dns ...string) (*keyPair, error) {
		return issue(&x509.Certificate{
			Subject:     pkix.Name{CommonName: cn},
			DNSNames:    dns,
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}, ca)
	}
	apiserver, err := serving("kube-apiserver", "localhost", "kubernetes", "kubernetes.default",
		"kubernetes.default.svc", "kubernetes.default.svc.cluster.local")
	if err != nil {
		return err
	}
	if err := write(dir, "apiserver", apiserver); err != nil {
		return err
	}
	kubelet, err := serving("system:node:"+node, "localhost", node)
	if err != nil {
		return err
	}
	if err := write(dir, "kubelet-serving", kubelet); err != nil {
		return err
	}
	// The service-account token signing key (private for the API server
	// and the controller manager, public for verification).
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	saKey, err := x509.MarshalECPrivateKey(sa)
	if err != nil {
		return err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: saKey})
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), keyPEM, 0o600); err != nil {
		return err
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub})
	if err := os.WriteFile(filepath.Join(dir, "sa.pub"), pubPEM, 0o644); err != nil {
		return err
	}
	caPEM, _, err := pemOf(ca)
	if err != nil {
		return err
	}
	for _, c := range []struct{ file, cn, org string }{
		{"admin", "unlearn-test-admin", "system:masters"},
		{"controller-manager", "system:kube-controller-manager", ""},
		{"scheduler", "system:kube-scheduler", ""},
		{"kubelet", "system:node:" + node, "system:nodes"},
	} {
		subject := pkix.Name{CommonName: c.cn}
		if c.org != "" {
			subject.Organization = []string{c.org}
		}
		kp, err := issue(&x509.Certificate{
			Subject:     subject,
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}, ca)
		if err != nil {
			return err
		}
		certPEM, keyPEM, err := pemOf(kp)
		if err != nil {
			return err
		}
		b64 := base64.StdEncoding.EncodeToString
		kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: unlearn-test
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: unlearn-test
  context: {cluster: unlearn-test, user: %s}
current-context: unlearn-test
`, server, b64(caPEM), c.cn, b64(certPEM), b64(keyPEM), c.cn)
		if err := os.WriteFile(filepath.Join(dir, c.file+".kubeconfig"), []byte(kubeconfig), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// blob is one content-addressed file of an OCI image layout.
type blob struct {
	MediaType string            `json:"mediaType"`
	Digest    string            `json:"digest"`
	Size      int               `json:"size"`
	Platform  map[string]string `json:"platform,omitempty"`
	// Annotations name the image for containerd's importer.
	Annotations map[string]string `json:"annotations,omitempty"`
	data        []byte
}

func newBlob(mediaType string, data []byte) blob {
	sum := sha256.Sum256(data)
	return blob{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: len(data), data: data}
}

// file is one entry of a tar archive; nil data makes it a folder.
type file struct {
	name string
	mode int64
	data []byte
}

func tarFiles(files []file) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg,
			ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if f.data == nil {
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func image(binary, out, name string) error {
	exe, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	layerTar, err := tarFiles([]file{{"pause", 0o755, exe}})
	if err != nil {
		return err
	}
	layer := newBlob("application/vnd.oci.image.layer.v1.tar", layerTar)
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config":       map[string]any{"Entrypoint": []string{"/pause"}, "User": "65535:65535"},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{layer.Digest}},
	})
	if err != nil {
		return err
	}
	cfg := newBlob("application/vnd.oci.image.config.v1+json", config)
	manifestJSON, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        cfg,
		"layers":        []blob{layer},
	})
	if err != nil {
		return err
	}
	manifest := newBlob("application/vnd.oci.image.manifest.v1+json", manifestJSON)
	manifest.Platform = map[string]string{"architecture": runtime.GOARCH, "os": "linux"}
	manifest.Annotations = map[string]string{"io.containerd.image.name": name}
	index, err := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []blob{manifest}})
	if err != nil {
		return err
	}
	archive, err := tarFiles([]file{
		{"oci-layout", 0o644, []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", 0o644, index},
		{"blobs/", 0o755, nil},
		{"blobs/sha256/", 0o755, nil},
		{"blobs/sha256/" + layer.Digest[7:], 0o644, layer.data},
		{"blobs/sha256/" + cfg.Digest[7:], 0o644, cfg.data},
		{"blobs/sha256/" + manifest.Digest[7:], 0o644, manifest.data},
	})
	if err != nil {
		return err
	}
	return os.WriteFile(out, archive, 0o644)
}
