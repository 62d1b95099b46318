print("screencast-call: not yet built")
