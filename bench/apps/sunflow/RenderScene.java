import java.io.File;

import org.sunflow.SunflowAPI;
import org.sunflow.core.display.FileDisplay;
import org.sunflow.math.Matrix4;
import org.sunflow.math.Point3;
import org.sunflow.math.Vector3;

/**
 * sunflow's short workload: a small scene rendered by Sunflow's renderer into a PNG. The scene is built through
 * Sunflow's API, as org.sunflow.Benchmark builds its own (Debian's sunflow.jar has no scene-file parser), with
 * the same kinds of objects: a tessellated teapot, a mirror and a glass sphere, a floor, an area light and a
 * point light, antialiasing; but ambient occlusion instead of instant global illumination, so that it stays
 * short. The benchmark's smallest image (32x32) is 2.4 G bytecodes; this is about a tenth of that.
 * Usage: RenderScene SIZE OUT.png; exit 1 when no image is written. `-help` prints the usage (the start-up run).
 */
public final class RenderScene extends SunflowAPI {
  private final int size;

  private RenderScene(int size) {
    this.size = size;
  }

  @Override
  public void build() {
    parameter("threads", 1);
    parameter("resolutionX", size);
    parameter("resolutionY", size);
    parameter("aa.min", 0);
    parameter("aa.max", 1);
    parameter("filter", "gaussian");
    parameter("depths.reflection", 2);
    parameter("depths.refraction", 2);
    parameter("gi.engine", "ambocc");
    parameter("gi.ambocc.samples", 4);
    parameter("gi.ambocc.maxdist", 3f);
    options(DEFAULT_OPTIONS);

    parameter("transform", Matrix4.lookAt(new Point3(0, -9, 3), new Point3(0, 0, 0.8f), new Vector3(0, 0, 1)));
    parameter("fov", 45f);
    parameter("aspect", 1f);
    camera("camera", "pinhole");
    parameter("camera", "camera");
    options(DEFAULT_OPTIONS);

    parameter("center", new Point3(3, -4, 6));
    parameter("power", null, 400f, 400f, 400f);
    light("lamp", "point");
    parameter("radiance", null, 6f, 5.4f, 4.8f);
    parameter("center", new Point3(-3, -2, 5));
    parameter("radius", 0.5f);
    parameter("samples", 4);
    light("globe", "sphere");

    parameter("diffuse", null, 0.7f, 0.7f, 0.7f);
    shader("gray", "diffuse");
    parameter("diffuse", null, 0.8f, 0.2f, 0.2f);
    parameter("specular", null, 0.5f, 0.5f, 0.5f);
    parameter("power", 30f);
    parameter("samples", 2);
    shader("red", "phong");
    parameter("diffuse", null, 0.2f, 0.2f, 0.5f);
    parameter("shiny", 0.6f);
    shader("mirror", "shiny_diffuse");
    parameter("eta", 1.5f);
    parameter("color", null, 0.9f, 0.95f, 1f);
    shader("glass", "glass");

    parameter("center", new Point3(0, 0, 0));
    parameter("normal", new Vector3(0, 0, 1));
    geometry("floor", "plane");
    parameter("shaders", "gray");
    instance("floor.instance", "floor");

    parameter("subdivs", 4);
    parameter("smooth", true);
    geometry("teapot", "teapot");
    parameter("transform", Matrix4.translation(0, 0.5f, 0).multiply(Matrix4.scale(0.018f)));
    parameter("shaders", "red");
    instance("teapot.instance", "teapot");

    geometry("sphere", "sphere");
    parameter("transform", Matrix4.translation(2, 0, 1));
    parameter("shaders", "mirror");
    instance("mirror.instance", "sphere");
    parameter("transform", Matrix4.translation(-2, -1, 0.8f).multiply(Matrix4.scale(0.8f)));
    parameter("shaders", "glass");
    instance("glass.instance", "sphere");
  }

  public static void main(String[] args) {
    if (args.length == 1 && args[0].equals("-help")) {
      System.out.println("usage: RenderScene SIZE OUT.png");
      return;
    }
    if (args.length != 2) {
      System.err.println("usage: RenderScene SIZE OUT.png");
      System.exit(2);
    }
    File out = new File(args[1]);
    out.delete();
    RenderScene scene = new RenderScene(Integer.parseInt(args[0]));
    scene.build();
    scene.render(DEFAULT_OPTIONS, new FileDisplay(out.getPath()));
    if (!out.isFile() || out.length() == 0) {
      System.err.println("RenderScene: " + out + ": no image written");
      System.exit(1);
    }
    System.out.println("rendered " + out + " (" + out.length() + " bytes)");
  }
}
