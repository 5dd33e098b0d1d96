import animserver

with animserver.Client("127.0.0.1", 7878) as client:                   # make run's server
    me = client.create_characters("default", [{"x": 0, "z": 0}]).characters[0]
    client.set_inputs([animserver.stick(me, 0.0, 0.8)])               # stick forward: walk toward +z
    for frame in client.subscribe([me]).frames(120):                  # 2 s of 60 Hz frames
        for pose in frame:                                            # one row per character, with its id
            print(frame.tick, pose.character, pose.positions[0])      # the root's world position (m)
    try:
        client.describe_database("nope")
    except animserver.NotFoundError as e:                             # one class per error code
        print("no such database:", e.message)
