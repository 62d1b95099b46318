#!/usr/bin/env python3
"""Looks at the call's HTTPS side from outside: the served certificate's SHA-256 fingerprint (upper-case hex
pairs, as the call prints it), the page's status with and without the token, WHEP without the token, and what plain HTTP sent to the HTTPS port is answered.
Prints one JSON object."""
import argparse
import hashlib
import http.client
import json
import socket
import ssl


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token", required=True)
    args = parser.parse_args()
    result = {}
    pem = ssl.get_server_certificate(("127.0.0.1", args.port))
    digest = hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest().upper()
    result["sha256"] = ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))
    context = ssl._create_unverified_context()  # self-signed by design: the fingerprint is what we compare
    connection = http.client.HTTPSConnection("127.0.0.1", args.port, context=context, timeout=10)
    connection.request("GET", "/")
    result["pageWithoutToken"] = connection.getresponse().status
    connection.close()
    connection = http.client.HTTPSConnection("127.0.0.1", args.port, context=context, timeout=10)
    connection.request("GET", "/?token=" + args.token)
    result["pageStatus"] = connection.getresponse().status
    connection.close()
    connection = http.client.HTTPSConnection("127.0.0.1", args.port, context=context, timeout=10)
    connection.request("POST", "/whep", body="v=0\r\n", headers={"Content-Type": "application/sdp"})
    result["whepWithoutToken"] = connection.getresponse().status
    connection.close()
    # Plain HTTP sent to the HTTPS port: never the page, but an answer saying where to go.
    for name, method, path in [("plainGET", "GET", "/?token=" + args.token), ("plainPOST", "POST", "/whep")]:
        try:
            plain = http.client.HTTPConnection("127.0.0.1", args.port, timeout=5)
            plain.request(method, path, body=None if method == "GET" else "v=0\r\n")
            response = plain.getresponse()
            result[name] = {"status": response.status, "location": response.getheader("Location"),
                            "body": response.read().decode("utf-8", "replace")}
            plain.close()
        except (http.client.HTTPException, ConnectionError, socket.timeout, OSError) as error:
            result[name] = {"error": repr(error)}
    # TLS still works after them.
    connection = http.client.HTTPSConnection("127.0.0.1", args.port, context=context, timeout=10)
    connection.request("GET", "/?token=" + args.token)
    result["pageAfterPlain"] = connection.getresponse().status
    connection.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
