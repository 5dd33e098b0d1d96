"""Run inside Blender (``blender -b --factory-startup --python THIS -- FORMAT FILE OUT.json FRAME...``):
imports a glTF (.glb/.gltf) or BVH file with Blender's own importers and writes, as JSON, the armature's
bone names, its action's frame range, and each bone's world head position at the given recorded frames
(0 = the first), in Blender's coordinates (metres, Z up). test_export_blender.py compares them with the
stream."""
import json
import sys

import bpy

argv = sys.argv[sys.argv.index("--") + 1:]
fmt, path, out_path = argv[0], argv[1], argv[2]
frames = [int(f) for f in argv[3:]]

for obj in list(bpy.data.objects):  # the factory scene's cube, camera and light
    bpy.data.objects.remove(obj, do_unlink=True)
scene = bpy.context.scene
scene.render.fps, scene.render.fps_base = 60, 1.0  # the recording's rate: a key per scene frame
if fmt == "gltf":
    # SMOOTH: Debian's Blender 3.4.1 fails on the default "NORMALS" shading with NumPy >= 1.24 (np.bool).
    bpy.ops.import_scene.gltf(filepath=path, import_shading="SMOOTH")
else:
    # Debian's Blender 3.4.1 BVH importer opens the file with mode "rU", which Python 3.11 refuses: open it
    # without the U (the default newline handling is what "U" asked for).
    import builtins
    from io_anim_bvh import import_bvh
    import_bvh.open = lambda file, mode="r", *a, **k: builtins.open(file, mode.replace("U", ""), *a, **k)
    # The file is in centimetres: 0.01 makes metres. Y up in the file, Z up in Blender (the default axes).
    bpy.ops.import_anim.bvh(filepath=path, global_scale=0.01, frame_start=1, rotate_mode="NATIVE",
                            axis_forward="-Z", axis_up="Y", update_scene_fps=False)
armatures = [o for o in scene.objects if o.type == "ARMATURE"]
result = {"armatures": len(armatures), "objects": sorted(o.type for o in scene.objects)}
if armatures:
    arm = armatures[0]
    action = arm.animation_data.action if arm.animation_data else None
    result["bones"] = [b.name for b in arm.data.bones]
    result["parents"] = {b.name: (b.parent.name if b.parent else None) for b in arm.data.bones}
    result["action"] = action.name if action else None
    start, end = (action.frame_range if action else (scene.frame_start, scene.frame_end))
    result["frame_range"] = [start, end]
    result["keyframes"] = max((len(fc.keyframe_points) for fc in action.fcurves), default=0) if action else 0
    result["heads"] = {}
    for f in frames:
        scene.frame_set(int(round(start)) + f)
        result["heads"][str(f)] = {pb.name: list(arm.matrix_world @ pb.head) for pb in arm.pose.bones}
with open(out_path, "w") as out:
    json.dump(result, out)
