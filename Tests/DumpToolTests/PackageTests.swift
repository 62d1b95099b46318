import Foundation
import Glibc
import TestSupport
import XCTest

/// `tools/package` makes a .deb that installs into an empty root with dpkg (`--root`, its own database), declares
/// the Debian libraries the programs link, and whose `screencast-call --version` runs from that root with the
/// toolchain's Swift runtime hidden (a mount namespace with a tmpfs over /opt/swift): the package carries
/// what it needs beyond its Depends.
final class PackageTests: XCTestCase {
    func testTheDebInstallsDeclaresItsLibrariesAndRuns() throws {
        for tool in ["/usr/bin/dpkg-deb", "/usr/bin/dpkg-shlibdeps", "/usr/bin/patchelf", "/usr/bin/unshare"] {
            XCTAssertTrue(FileManager.default.isExecutableFile(atPath: tool), "\(tool) is missing: run tools/setup")
        }
        let work = try TemporaryDirectory(prefix: "sc-deb")
        defer { work.remove() }
        let products = TestPaths.executable("screencast-call").deletingLastPathComponent().path
        let built = try ProcessRunner.run(
            TestPaths.packageRoot.appendingPathComponent("tools/package"),
            ["--from", products, "--out", work.path("out"), "--compress", "gzip"], timeout: 120)
        XCTAssertEqual(built.status, 0, built.stderr)
        let deb = try XCTUnwrap(built.stdout.split(separator: "\n").last.map(String.init))
        XCTAssertTrue(deb.hasSuffix("/screencast_0.1.0_amd64.deb"), deb)

        // dpkg -I: the control fields, Depends computed from the programs' libraries.
        let info = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/dpkg-deb"), ["-I", deb])
        XCTAssertEqual(info.status, 0, info.stderr)
        let depends = try XCTUnwrap(info.stdout.split(separator: "\n").first { $0.hasPrefix(" Depends: ") }, info.stdout)
        for library in ["libc6 (>= ", "libvpx7 (>= ", "libnice10 (>= ", "libmicrohttpd12 (>= ", "libsrtp2-1 (>= ", "libssl3 (>= ",
                        "libturbojpeg0 (>= ", "libyuv0", "libx264-164", "libavformat59", "libcurl4", "libxcb-shm0", "libpulse0",
                        "libstdc++6 (>= "] {
            XCTAssertTrue(depends.contains(library), "Depends lacks \(library): \(depends)")
        }
        XCTAssertFalse(depends.contains("swift"), "the Swift runtime is bundled, not a dependency")

        // An empty root with a dpkg database of its own; the dependencies are the host's, so --force-depends.
        let root = work.path("root")
        for folder in ["var/lib/dpkg/info", "var/lib/dpkg/updates"] {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
        for file in ["var/lib/dpkg/status", "var/lib/dpkg/available"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: root + "/" + file, contents: Data()))
        }
        let dpkg = URL(fileURLWithPath: "/usr/bin/dpkg")
        let installed = try ProcessRunner.run(dpkg, ["--root=" + root, "--force-depends", "--log=/dev/null", "-i", deb], timeout: 60)
        XCTAssertEqual(installed.status, 0, installed.stderr)
        let status = try ProcessRunner.run(dpkg, ["--root=" + root, "-s", "screencast"]).stdout
        XCTAssertTrue(status.contains("\nStatus: install ok installed\n"), status)
        let files = try ProcessRunner.run(dpkg, ["--root=" + root, "-L", "screencast"]).stdout.split(separator: "\n").map(String.init)
        for path in ["/usr/bin/screencast-call", "/usr/bin/screencast-agent", "/usr/bin/screencast-dump",
                     "/usr/share/man/man1/screencast-call.1.gz", "/usr/share/man/man1/screencast-agent.1.gz",
                     "/usr/lib/systemd/user/screencast-call.service", "/usr/lib/systemd/user/screencast-agent.service",
                     "/usr/lib/screencast/libswiftCore.so", "/usr/share/doc/screencast/copyright"] {
            XCTAssertTrue(files.contains(path), "\(path) not installed: \(files)")
        }
        // It runs from the root, on the bundled runtime only: /opt/swift hidden under an empty tmpfs.
        let run = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/unshare"),
            ["-m", "sh", "-c", "mount -t tmpfs none /opt/swift && exec env -i PATH=/usr/bin:/bin \"$0\" --version",
             root + "/usr/bin/screencast-call"], timeout: 30)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, "screencast-call 0.1.0\n")
        let page = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/man"), ["-l", root + "/usr/share/man/man1/screencast-call.1.gz"])
        XCTAssertTrue(page.stdout.contains("--log-format"), "the packaged manual page")
    }
}
