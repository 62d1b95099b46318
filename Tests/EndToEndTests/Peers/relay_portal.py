#!/usr/bin/python3
"""A ScreenCast portal that relays a real one and can close its session from the desktop's side.

xdg-desktop-portal-wlr 0.7 never sends Session::Closed (the desktop's "stop sharing" in GNOME and KDE), and the
frontend's Session.Close is refused to anyone but the session's owner. This stands in for the frontend on a
bus of its own (--serve ADDRESS, owning org.freedesktop.portal.Desktop there): at start it asks the real
portal (the session bus of its environment) for a stream, as a client does, and then answers the client's
CreateSession / SelectSources / Start / OpenPipeWireRemote with that stream's PipeWire node and a copy of its
remote's descriptor, Request::Response signals and all, as org.freedesktop.portal.ScreenCast says.
SIGUSR1: emit org.freedesktop.portal.Session::Closed on the client's session. Prints "serving" when ready.
--deny: no real portal; Start answers response 1 (the person cancelled the dialog), as a refusing desktop does.
Run with /usr/bin/python3 (python3-gi).
"""
import os
import signal
import sys

from gi.repository import Gio, GLib

XML = """
<node>
 <interface name="org.freedesktop.portal.ScreenCast">
  <method name="CreateSession"><arg type="a{sv}" direction="in"/><arg type="o" direction="out"/></method>
  <method name="SelectSources"><arg type="o" direction="in"/><arg type="a{sv}" direction="in"/><arg type="o" direction="out"/></method>
  <method name="Start"><arg type="o" direction="in"/><arg type="s" direction="in"/><arg type="a{sv}" direction="in"/>
   <arg type="o" direction="out"/></method>
  <method name="OpenPipeWireRemote"><arg type="o" direction="in"/><arg type="a{sv}" direction="in"/>
   <arg type="h" direction="out"/></method>
  <property name="AvailableSourceTypes" type="u" access="read"/>
  <property name="AvailableCursorModes" type="u" access="read"/>
  <property name="version" type="u" access="read"/>
 </interface>
 <interface name="org.freedesktop.portal.Session">
  <method name="Close"/>
  <signal name="Closed"><arg type="a{sv}"/></signal>
  <property name="version" type="u" access="read"/>
 </interface>
 <interface name="org.freedesktop.portal.Request">
  <method name="Close"/>
  <signal name="Response"><arg type="u"/><arg type="a{sv}"/></signal>
 </interface>
</node>
"""


def real_stream():
    """node, fd of a stream from the real portal (its session left open until we exit)."""
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    sender = bus.get_unique_name()[1:].replace(".", "_")
    portal = Gio.DBusProxy.new_sync(bus, Gio.DBusProxyFlags.NONE, None, "org.freedesktop.portal.Desktop",
                                    "/org/freedesktop/portal/desktop", "org.freedesktop.portal.ScreenCast", None)
    loop = GLib.MainLoop()
    count = [0]

    def request(method, fmt, before, options):
        count[0] += 1
        token = "relay%d_%d" % (os.getpid(), count[0])
        path = "/org/freedesktop/portal/desktop/request/%s/%s" % (sender, token)
        result = {}

        def on_response(_c, _s, _o, _i, _n, params, _u):
            result["code"], result["results"] = params.unpack()
            loop.quit()
        sub = bus.signal_subscribe("org.freedesktop.portal.Desktop", "org.freedesktop.portal.Request", "Response", path,
                                   None, Gio.DBusSignalFlags.NO_MATCH_RULE, on_response, None)
        options = dict(options, handle_token=GLib.Variant("s", token))
        portal.call_sync(method, GLib.Variant(fmt, tuple(before) + (options,)), Gio.DBusCallFlags.NONE, -1, None)
        timer = GLib.timeout_add_seconds(10, loop.quit)
        loop.run()
        GLib.source_remove(timer) if "code" in result else None
        bus.signal_unsubscribe(sub)
        if result.get("code") != 0:
            sys.exit("%s failed: %r" % (method, result))
        return result["results"]

    session = request("CreateSession", "(a{sv})", [], {"session_handle_token": GLib.Variant("s", "relay%d" % os.getpid())})["session_handle"]
    request("SelectSources", "(oa{sv})", [session], {"types": GLib.Variant("u", 1), "cursor_mode": GLib.Variant("u", 2)})
    streams = request("Start", "(osa{sv})", [session, ""], {})["streams"]
    reply, fds = portal.call_with_unix_fd_list_sync("OpenPipeWireRemote", GLib.Variant("(oa{sv})", (session, {})),
                                                    Gio.DBusCallFlags.NONE, -1, None, None)
    return bus, streams, fds.get(reply.unpack()[0])


def main():
    address = sys.argv[sys.argv.index("--serve") + 1]
    deny = "--deny" in sys.argv
    keep, streams, fd = (None, [], -1) if deny else real_stream()
    bus = Gio.DBusConnection.new_for_address_sync(
        address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
    node = Gio.DBusNodeInfo.new_for_xml(XML)
    screencast, session_iface, request_iface = (node.lookup_interface(n) for n in (
        "org.freedesktop.portal.ScreenCast", "org.freedesktop.portal.Session", "org.freedesktop.portal.Request"))
    sessions = []

    # Signals go to the client alone, as xdg-desktop-portal sends them: libportal subscribes without a match rule.
    def respond(sender, path, results, code=0):
        def emit():
            bus.emit_signal(sender, path, "org.freedesktop.portal.Request", "Response", GLib.Variant("(ua{sv})", (code, results)))
            return False
        GLib.timeout_add(10, emit)

    def request_path(sender, options):
        return "/org/freedesktop/portal/desktop/request/%s/%s" % (sender[1:].replace(".", "_"), options.get("handle_token", "t"))

    def on_call(_conn, sender, _path, _iface, method, params, invocation):
        args = params.unpack()
        if method == "CreateSession":
            options = args[0]
            session = "/org/freedesktop/portal/desktop/session/%s/%s" % (sender[1:].replace(".", "_"), options.get("session_handle_token", "s"))
            bus.register_object(session, session_iface, lambda *a: a[-1].return_value(None), lambda *a: GLib.Variant("u", 1), None)
            sessions.append((sender, session))
            path = request_path(sender, options)
            invocation.return_value(GLib.Variant("(o)", (path,)))
            respond(sender, path, {"session_handle": GLib.Variant("s", session)})
        elif method == "SelectSources":
            path = request_path(sender, args[1])
            invocation.return_value(GLib.Variant("(o)", (path,)))
            respond(sender, path, {})
        elif method == "Start":
            path = request_path(sender, args[2])
            invocation.return_value(GLib.Variant("(o)", (path,)))
            if deny:
                respond(sender, path, {}, code=1)
                return
            respond(sender, path, {"streams": GLib.Variant("a(ua{sv})", [(s[0], {"size": GLib.Variant("(ii)", s[1].get("size", (0, 0)))}) for s in streams])})
        elif method == "OpenPipeWireRemote":
            out = Gio.UnixFDList.new()
            out.append(os.dup(fd))
            invocation.return_value_with_unix_fd_list(GLib.Variant("(h)", (0,)), out)
        else:
            invocation.return_dbus_error("org.freedesktop.DBus.Error.UnknownMethod", method)

    def on_property(_conn, _sender, _path, _iface, name):
        return GLib.Variant("u", {"version": 4, "AvailableSourceTypes": 1, "AvailableCursorModes": 3}[name])

    bus.register_object("/org/freedesktop/portal/desktop", screencast, on_call, on_property, None)

    def close_sessions():
        for sender, session in sessions:
            bus.emit_signal(sender, session, "org.freedesktop.portal.Session", "Closed", GLib.Variant("(a{sv})", ({},)))
        print("closed %d" % len(sessions), flush=True)
        return True

    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, close_sessions)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: loop.quit() or False)
    loop = GLib.MainLoop()

    def owned(*_):
        print("serving", flush=True)
    Gio.bus_own_name_on_connection(bus, "org.freedesktop.portal.Desktop", Gio.BusNameOwnerFlags.NONE, owned, None)
    loop.run()


if __name__ == "__main__":
    main()
