"""Renders a recording as Blender imports it, for docs/export.md (make export-picture):

    blender -b --factory-startup --python tools/blender_render_recording.py -- IN.glb OUT.png [POSES]

Imports the glTF with Blender's own importer (as tests/interop/test_export_blender.py does), then draws the
imported armature at POSES evenly spaced frames of its action (default 6): a stick from each bone's world
head to its parent's and a ball at each head, coloured from the first pose (blue) to the last (orange),
over a ground grid, with Cycles on the CPU (headless: no display needed). The sticks are made from the
armature's evaluated pose bones, so the picture shows what Blender itself made of the file."""
import math
import sys

import bpy
from mathutils import Vector

argv = sys.argv[sys.argv.index("--") + 1:]
src, out = argv[0], argv[1]
poses = int(argv[2]) if len(argv) > 2 else 6

for obj in list(bpy.data.objects):
    bpy.data.objects.remove(obj, do_unlink=True)
scene = bpy.context.scene
scene.render.fps = 60
# SMOOTH: Debian's Blender 3.4.1 fails on the default "NORMALS" shading with NumPy >= 1.24 (np.bool).
bpy.ops.import_scene.gltf(filepath=src, import_shading="SMOOTH")
arm = next(o for o in scene.objects if o.type == "ARMATURE")
for o in scene.objects:
    if o.type == "MESH":  # the skin's carrier triangles: not part of the picture
        o.hide_render = True
start, end = arm.animation_data.action.frame_range


def material(name, rgb):
    m = bpy.data.materials.new(name)
    m.use_nodes = True
    bsdf = m.node_tree.nodes["Principled BSDF"]
    bsdf.inputs["Base Color"].default_value = (*rgb, 1.0)
    bsdf.inputs["Roughness"].default_value = 0.5
    return m


def stick(a, b, radius, mat):
    d = b - a
    if d.length < 1e-6:
        return
    bpy.ops.mesh.primitive_cylinder_add(radius=radius, depth=d.length, location=(a + b) / 2, vertices=12)
    o = bpy.context.active_object
    o.rotation_mode = "QUATERNION"
    o.rotation_quaternion = Vector((0, 0, 1)).rotation_difference(d)
    o.data.materials.append(mat)


def ball(p, radius, mat):
    bpy.ops.mesh.primitive_uv_sphere_add(radius=radius, location=p, segments=12, ring_count=8)
    bpy.context.active_object.data.materials.append(mat)


lo, hi = Vector((1e9, 1e9, 1e9)), Vector((-1e9, -1e9, -1e9))
for i in range(poses):
    frame = int(round(start + (end - start) * i / max(poses - 1, 1)))
    scene.frame_set(frame)
    t = i / max(poses - 1, 1)
    mat = material(f"pose{i}", (0.15 + 0.8 * t, 0.35 + 0.2 * t, 0.9 - 0.75 * t))
    heads = {pb.name: arm.matrix_world @ pb.head for pb in arm.pose.bones}
    for pb in arm.pose.bones:
        h = heads[pb.name]
        lo = Vector(map(min, lo, h))
        hi = Vector(map(max, hi, h))
        ball(h, 0.03, mat)
        if pb.parent:
            stick(heads[pb.parent.name], h, 0.015, mat)

bpy.ops.mesh.primitive_plane_add(size=40, location=(0, 0, 0))
grid = bpy.context.active_object
grid.data.materials.append(material("ground", (0.8, 0.8, 0.8)))

centre, size = (lo + hi) / 2, max((hi - lo).length, 1.0)
bpy.ops.object.camera_add(location=centre + Vector((size * 0.75, -size * 0.8, size * 0.5)))
cam = bpy.context.active_object
cam.data.lens = 35
cam.rotation_euler = (centre - cam.location).to_track_quat("-Z", "Y").to_euler()
scene.camera = cam
bpy.ops.object.light_add(type="SUN", location=(0, 0, 10))
bpy.context.active_object.rotation_euler = (math.radians(40), 0, math.radians(30))
bpy.context.active_object.data.energy = 2.5
bpy.context.active_object.data.angle = math.radians(20)  # soft shadows
scene.world = bpy.data.worlds.new("sky") if scene.world is None else scene.world
scene.world.color = (0.9, 0.92, 0.95)

scene.render.engine = "CYCLES"
scene.cycles.device = "CPU"
scene.cycles.samples = 32
scene.cycles.use_denoising = False  # Debian builds Cycles without OpenImageDenoise
scene.render.resolution_x, scene.render.resolution_y = 960, 540
scene.render.filepath = out
scene.render.image_settings.file_format = "PNG"
bpy.ops.render.render(write_still=True)
print(f"rendered {poses} poses of {len(arm.pose.bones)} bones, frames {start:g}..{end:g}, to {out}")
